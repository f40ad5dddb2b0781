fine = 1
def broken(:
    pass
