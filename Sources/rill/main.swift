print("rill")
