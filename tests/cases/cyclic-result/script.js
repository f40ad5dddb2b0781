const a = {}; a.self = a;
return a;
