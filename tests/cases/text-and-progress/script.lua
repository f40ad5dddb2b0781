text("one")
progress("half", 1, 2)
text({ n = 2 })
progress("done")
