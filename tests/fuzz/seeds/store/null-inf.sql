UPDATE steps SET tokens = NULL, loss = 1e308 * 10;
