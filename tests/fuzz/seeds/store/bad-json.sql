UPDATE runs SET meta_json = '{"seq_len": -5, "model": 7}'; UPDATE findings SET evidence_json = '[1,2';
