"""Runs llama.cpp's own converter (convert_hf_to_gguf.py of a llama.cpp tree, LLAMA_DIR) on a tiny
checkpoint the makers wrote, with the vocabulary taken through gguf-py's LlamaHfVocab step: the
converters' BPE steps want a known pre-tokenizer, which the made-up tokenizer (tiny_tokenizer.py)
cannot be, and the vocabulary is not what the files test. Used by make_deepseek_v32.py,
make_deepseek_v4.py and make_glm5.py."""
import os
import subprocess
import sys


def convert_bf16(src, llama, dst, module, model_class):
    """Converts the folder `src` into `dst` (BF16 where the converter does not force a type), with
    conversion.<module>.<model_class>'s vocabulary step replaced as above."""
    driver = ("import sys; sys.argv = ['convert_hf_to_gguf.py'] + sys.argv[1:]; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
              "import convert_hf_to_gguf as c\n"
              "from conversion.base import TextModel\n"
              "from conversion.%s import %s as Model\n"
              "Model.set_vocab = TextModel._set_vocab_llama_hf\n"
              "c.main()\n") % (llama, os.path.join(llama, "gguf-py"), module, model_class)
    subprocess.run([sys.executable, "-c", driver, src, "--outfile", dst, "--outtype", "bf16"], check=True)
