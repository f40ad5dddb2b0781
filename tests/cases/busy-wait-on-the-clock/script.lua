local finish = os.time() + 60
while os.time() < finish do end
