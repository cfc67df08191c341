"""A tiny byte-fallback BPE tokenizer with a Sequence decoder, saved as transformers saves a fast
tokenizer: what llama.cpp's converter accepts from a Hugging Face folder (gguf-py's LlamaHfVocab
and the BPE path) when no published tokenizer can be fetched. Trained on a fixed text, so the files
are the same on every run. Used by the checkpoint makers (make_gemma4.py, make_deepseek_v32.py)."""
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast


def save_tokenizer(out, vocab_size=320):
    """Writes tokenizer.json and tokenizer_config.json into `out`; returns the vocabulary size."""
    special = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{b:02X}>" for b in range(256)]
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    text = ["the quick brown fox jumps over the lazy dog " * 4, "experts route tokens through a sparse mixture " * 4]
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")
    fast.save_pretrained(out)
    return len(fast)
