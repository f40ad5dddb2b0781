local function down(n) return down(n + 1) + 1 end
return down(0)
