#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a tiny llama model that llama.cpp's own tools load and run.

    make-tiny-model.py LLAMA_SOURCE OUT.gguf
    make-tiny-model.py --hostile-arch LLAMA_SOURCE OUT.gguf

The model is made with llama.cpp's own gguf-py (LLAMA_SOURCE/gguf-py), so
the file is what llama.cpp writes, not a copy of its format made here.
Its vocabulary is the 32,000-token SentencePiece vocabulary that ships in
LLAMA_SOURCE/models/ggml-vocab-llama-spm.gguf; its weights are random
numbers from a fixed seed, so the same source makes the same bytes, and
no weights are kept in the repository.  Two layers of 64: it loads in a
fraction of a second and says nothing sensible, which is all a test of
the programs around it needs.

With --hostile-arch the file has no tensors, and its general.architecture
is text a model's author chose: ggml-metal's abort and failure lines
after a newline.  llama.cpp prints the name raw when it does not know it
(src/llama-model.cpp:361, "unknown model architecture: '...'", logged by
src/llama.cpp:375) and the program ends with an exit status.
"""
import sys

import numpy as np

SEED = 20260912          # the pinned source's date: any fixed number does
N_EMBD = 64
N_FF = 128
N_LAYER = 2
N_HEAD = 4
N_CTX = 512


HOSTILE_ARCH = ("x\n"
                "/Users/runner/work/llama.cpp/ggml/src/ggml-metal/"
                "ggml-metal-device.m:852: ggml_metal_encoder_set_pipeline: "
                "nil Metal pipeline (missing kernel; see compile_pipeline "
                "log above)\n"
                "ggml_metal_library_compile_pipeline: failed to compile "
                "pipeline: base = 'kernel_mul_mm_f16_f32', name = "
                "'kernel_mul_mm_f16_f32'\n")


def hostile(gguf, out):
    """A header and its keys: the architecture's name is the payload."""
    writer = gguf.GGUFWriter(out, HOSTILE_ARCH)
    writer.add_name("metalcap-hostile")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    args = sys.argv[1:]
    hostile_arch = args[:1] == ["--hostile-arch"]
    if hostile_arch:
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: make-tiny-model.py [--hostile-arch] LLAMA_SOURCE "
                 "OUT.gguf")
    source, out = args
    sys.path.insert(0, source + "/gguf-py")
    import gguf  # noqa: E402  (llama.cpp's own, from the pinned source)

    if hostile_arch:
        hostile(gguf, out)
        return

    vocab = gguf.GGUFReader(source + "/models/ggml-vocab-llama-spm.gguf")
    writer = gguf.GGUFWriter(out, "llama")
    writer.add_name("metalcap-tiny")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    # The tokenizer's keys, copied as the vocabulary file has them.
    n_vocab = 0
    for field in vocab.fields.values():
        if not field.name.startswith("tokenizer."):
            continue
        kind = field.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            sub = field.types[-1]
            if sub == gguf.GGUFValueType.STRING:
                value = [bytes(field.parts[i]) for i in field.data]
            else:
                value = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_array(field.name, value)
            if field.name == "tokenizer.ggml.tokens":
                n_vocab = len(value)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(field.name, bytes(field.parts[-1]).decode())
        else:
            writer.add_key_value(field.name, field.parts[-1].tolist()[0],
                                 kind)

    rng = np.random.default_rng(SEED)

    def weights(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float16)

    def norm():
        return np.ones(N_EMBD, dtype=np.float32)

    writer.add_tensor("token_embd.weight", weights(n_vocab, N_EMBD))
    for i in range(N_LAYER):
        b = "blk.%d." % i
        writer.add_tensor(b + "attn_norm.weight", norm())
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(b + name + ".weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(b + "ffn_norm.weight", norm())
        writer.add_tensor(b + "ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(b + "ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(b + "ffn_down.weight", weights(N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", norm())
    writer.add_tensor("output.weight", weights(n_vocab, N_EMBD))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
