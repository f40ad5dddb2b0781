def inner():
    raise ValueError("deep trouble")


def outer():
    inner()


outer()
