let v = 0;
for (let i = 0; i < 512; i++) v = [v];
const back = await tools.echo(v);
let d = 0, x = back;
while (Array.isArray(x)) { x = x[0]; d++; }
return d;
