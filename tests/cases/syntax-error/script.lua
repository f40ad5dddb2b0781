local fine = 1
local broken = = 2
return broken
