local a = {}
a.self = a
return a
