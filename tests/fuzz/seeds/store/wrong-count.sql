UPDATE runs SET nrows = nrows + 5, first_step = -1;
