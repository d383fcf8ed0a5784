DELETE FROM steps WHERE rowid % 3 = 0;
