"""Model parameter lists: totals equal the reference implementations' counts."""

import pytest

from allreduce_explainer.catalog import models

# Reference counts: sum(p.numel() for p in model.parameters()) in the reference implementation.
TOTALS = {
    "gpt2": 124_439_808,  # HF GPT2Model, tied embeddings counted once
    "bert-base": 109_482_240,  # HF BertModel (bert-base-uncased) with pooler, no MLM head
    "resnet50": 25_557_032,  # torchvision resnet50
    "gpt2-xl": 1_557_611_200,  # HF GPT2Model, gpt2-xl
    "mistral-7b": 7_241_732_096,  # Mistral 7B v0.1 (MistralForCausalLM)
    "llama3-8b": 8_030_261_248,  # Meta-Llama-3-8B (LlamaForCausalLM)
    "llama3-70b": 70_553_706_496,  # Meta-Llama-3-70B
    "llama3-405b": 405_853_388_800,  # Llama 3.1 405B
}


@pytest.mark.parametrize(("key", "total"), sorted(TOTALS.items()))
def test_parameter_totals_match_reference_implementations(key, total):
    m = models.get(key)
    assert m.params == total
    assert sum(e for _, e, _ in m.tensors()) == total


def test_tensor_counts_match_the_reference_modules():
    # GPT-2: wte, wpe, 12 per block, ln_f; BERT: 5 embedding tensors, 16 per layer, pooler 2;
    # ResNet-50: 53 convolutions, 53 batch norms (2 each), fc weight and bias
    assert len(models.get("gpt2").tensors()) == 2 + 12 * 12 + 2
    assert len(models.get("bert-base").tensors()) == 5 + 16 * 12 + 2
    assert len(models.get("resnet50").tensors()) == 53 + 2 * 53 + 2


def test_resnet50_forward_flops_from_layer_shapes():
    # torchvision documents 4.09 GFLOPS (multiply-adds) per 224x224 image
    macs = models.get("resnet50").forward_flops / 2
    assert 4.08e9 < macs < 4.10e9


@pytest.mark.parametrize("key", ["gpt2", "llama3-8b", "mistral-7b"])
def test_transformer_forward_flops_are_about_two_per_parameter_per_token(key):
    m = models.get(key)
    per_token = m.forward_flops / m.tokens
    # 2N for the matrices (embedding lookups free, a tied head adds its matmul) plus attention
    assert 1.9 * m.params < per_token < 2.3 * m.params


def test_gpt2_tied_head_has_flops_but_no_parameters():
    m = models.get("gpt2")
    head = m.layers[-1]
    assert head.params == 0 and head.flops == 2 * 768 * 50257 * 1024
    assert m.tensors()[0][0] == "embed_tokens.weight"
