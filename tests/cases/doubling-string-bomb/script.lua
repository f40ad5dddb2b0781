local s = "a"
while true do s = s .. s end
