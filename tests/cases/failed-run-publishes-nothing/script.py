with open("/output/partial.txt", "w") as f:
    f.write("half of it")
raise RuntimeError("failed after writing")
