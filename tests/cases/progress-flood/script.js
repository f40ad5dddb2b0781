let i = 0;
for (; i < 100000; i++) progress('step ' + i, i, 100000);
return i;
