local keep = {}
while true do keep[#keep + 1] = { n = #keep } end
