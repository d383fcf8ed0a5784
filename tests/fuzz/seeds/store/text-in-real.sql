UPDATE steps SET step_time_s = 'x' WHERE rowid = 2;
