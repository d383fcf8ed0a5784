UPDATE rank_obs SET row_no = 99999;
INSERT INTO rank_obs SELECT run_id, 999, 0, 1, -7, 'a', NULL FROM runs;
