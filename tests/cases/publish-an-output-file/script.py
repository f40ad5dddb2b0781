import forge
with open("/output/hello.txt", "w") as f:
    f.write("hello from the script\n")
forge.result("written")
