let s = "a";
while (true) s += s;
