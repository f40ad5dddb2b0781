let v = 0;
for (let i = 0; i < 513; i++) v = [v];
return v;
