def compute(rows):
    return rows["missing"]

compute({"present": 1})
