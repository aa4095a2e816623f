// Work in progress (issue 4).
