#!/usr/bin/python3
"""Writes tests/fixtures/marian/vocab.yml: a Marian vocab.yml over the
fixtures' vocab.spm whose ids are not the .spm's own (as OPUS-MT's joint
vocabularies are not): </s> 0, <unk> 1, then the other pieces in the
reverse of the .spm's order.  Needs Debian's python3-sentencepiece; run
from the repository's root: /usr/bin/python3 tools/marian-ref/make_vocab_yml.py
"""
import json
import sentencepiece

F = "tests/fixtures/marian/"
m = sentencepiece.SentencePieceProcessor(model_file=F + "vocab.spm")
pieces = [m.id_to_piece(i) for i in range(m.get_piece_size())]
rest = [p for p in pieces if p not in ("</s>", "<unk>")]
order = ["</s>", "<unk>"] + rest[::-1]
with open(F + "vocab.yml", "w", encoding="utf-8") as f:
    for i, p in enumerate(order):
        # JSON strings are YAML double-quoted scalars
        f.write("%s: %d\n" % (json.dumps(p, ensure_ascii=False), i))
