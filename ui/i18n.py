"""Every piece of interface text in English and in simplified Chinese, and the language switch.

``t(key, **fmt)`` returns the string ``key`` in the session's language, formatted with
``str.format(**fmt)`` (so literal braces in a string are written ``{{`` and ``}}``). Values
put into a string with ``fmt`` are inserted as they are: anything a user typed must already
be a code span or escaped (``ui.text``) before it is passed in.

The language is the sidebar radio with key ``lang``, bound to the URL query parameter
``lang``: English is the default and leaves the URL clean, Chinese writes ``?lang=简体中文``
(the option's label; ``?lang=%E7%AE%80%E4%BD%93%E4%B8%AD%E6%96%87`` on the wire), so a
reload or a shared link keeps the language. ``?lang=zh`` (or zh-CN, zh-Hans, cn, 中文) is
accepted as a short form when a session starts, though Streamlit then drops it from the
address bar; any other value is dropped and the page is in English. Switching language keeps
every choice (strategy, tab, layer, head, speed...): see ``_keep_choices``.

Messages raised by the model (``InputError``, ``CheckpointError``) stay in English; in
Chinese mode they are shown after a Chinese lead-in. Tab labels are translated, but the
views keep their English names as ids (``TABS``), which also name the widget keys of each
tab (``"Cross-attention_layer"``); ``st.session_state["view"]`` may be set to a view's label
in either language (see ``sync_view``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

import streamlit as st

LANG_KEY = "lang"
LANG_LABEL = "Language / 语言"
LANGUAGES = {"English": "en", "简体中文": "zh"}  # radio option (what the URL holds) -> code
DEFAULT_LANGUAGE = "English"
# Short forms accepted in the URL on the first load, mapped to a radio option.
URL_ALIASES = {"en": "English", "english": "English", "zh": "简体中文", "zh-cn": "简体中文",
               "zh_cn": "简体中文", "zh-hans": "简体中文", "cn": "简体中文", "中文": "简体中文"}

STRINGS: dict[str, dict[str, str]] = {
    # -- page and sidebar (app.py) -----------------------------------------------------------
    "page_title": {"en": "Transformer attention, step by step",
                   "zh": "Transformer 注意力机制逐步演示"},
    "app_title": {"en": "Transformer, step by step", "zh": "逐步看懂 Transformer"},
    "spinner_loading": {"en": "Loading the model…", "zh": "正在加载模型…"},
    "spinner_decoding": {"en": "Decoding…", "zh": "正在解码…"},
    "spinner_teacher": {"en": "Teacher forcing…", "zh": "正在用教师强制计算…"},
    "no_models": {"en": "No models found in {path}.", "zh": "在 {path} 中没有找到模型。"},
    "model": {"en": "Model", "zh": "模型"},
    "model_failed": {"en": "Model {name} could not be loaded: {error}",
                     "zh": "模型 {name} 无法加载。原因（英文）：{error}"},
    "examples": {"en": "Examples", "zh": "示例句子"},
    "examples_placeholder": {"en": "Pick an example sentence…", "zh": "选择一个示例句子…"},
    "sentence": {"en": "English sentence", "zh": "英文句子"},
    "sentence_help": {"en": "Lower or upper case; punctuation is split off.",
                      "zh": "大小写均可；标点符号会被单独切分出来。"},
    "model_card": {
        "en": "{enc}+{dec} layers, {heads} heads, d_model {d_model}, {params:,} parameters. "
              "Test exact match {exact} %, BLEU {bleu}.",
        "zh": "编码器 {enc} 层 + 解码器 {dec} 层，{heads} 个注意力头，d_model = {d_model}，"
              "共 {params:,} 个参数。测试集完全匹配率 {exact} %，BLEU {bleu}。",
    },
    "model_card_everyday": {
        "en": "{enc}+{dec} layers, {heads} heads, d_model {d_model}, {params:,} parameters. "
              "Test BLEU {tatoeba} on Tatoeba and {hsk} on HSK sentences; grammar exact match "
              "{grammar} %.",
        "zh": "编码器 {enc} 层 + 解码器 {dec} 层，{heads} 个注意力头，d_model = {d_model}，"
              "共 {params:,} 个参数。测试集 BLEU：Tatoeba {tatoeba}，HSK {hsk}；"
              "合成语法完全匹配率 {grammar} %。",
    },
    "source_pieces": {"en": "Split into {n} subword pieces (a word's pieces joined by ·): ",
                      "zh": "切分为 {n} 个子词（同一个词的子词用 · 连接）："},
    "group_words": {"en": "Group subword pieces into words", "zh": "把子词合并成词"},
    "group_words_help": {
        "en": "As in Clark et al. 2019 (What Does BERT Look At?): attention to a word is the "
              "sum of the attention to its pieces, attention from a word the mean of its "
              "pieces' rows, so every row still sums to 1.",
        "zh": "按照 Clark 等人 2019 年的做法（What Does BERT Look At?）：对一个词的注意力是对"
              "它各个子词注意力之和，一个词发出的注意力是它各个子词那几行的平均值，所以每一行"
              "的和仍然是 1。",
    },
    "choose_model": {"en": "Choose a model in the sidebar.", "zh": "请在侧边栏中选择一个模型。"},
    "page_error": {
        "en": "Something went wrong while drawing this page. Try another sentence or reload; "
              "the error has been logged.",
        "zh": "绘制页面时出错了。请换一个句子试试，或者刷新页面；错误已记录在日志中。",
    },
    # -- checking the sentence -----------------------------------------------------------------
    "input_error": {"en": "{error}", "zh": "这个句子无法翻译。原因（英文）：{error}"},
    "unknown_try": {"en": "try {words}", "zh": "可以试试 {words}"},
    "word_separator": {"en": ", ", "zh": "、"},
    "unknown_none_close": {"en": "no close match", "zh": "没有拼写相近的词"},
    "unknown_line": {"en": "- {word}: {hint}", "zh": "- {word}：{hint}"},
    "unknown_more": {"en": "\n- … and {n} more", "zh": "\n- ……另外还有 {n} 个"},
    "unknown_all": {
        "en": "None of these words are in the model's vocabulary, so there is nothing to "
              "translate.\n\n",
        "zh": "这些词都不在模型的词表中，因此没有可以翻译的内容。\n\n",
    },
    "unknown_some": {
        "en": "Not in the model's vocabulary (the model sees `<unk>` for these):\n\n",
        "zh": "以下词不在模型的词表中（模型把它们都当作 `<unk>`）：\n\n",
    },
    # -- header --------------------------------------------------------------------------------
    "empty_output": {"en": "(empty output)", "zh": "（输出为空）"},
    "grammar_outside": {
        "en": "outside the synthetic grammar the model was trained on, so expect mistakes",
        "zh": "这句话超出了模型训练所用的合成语法，翻译可能出错",
    },
    "grammar_not_checked": {"en": "a model trained on everyday sentences",
                            "zh": "模型用日常句子训练"},
    "grammar_match": {"en": "matches the grammar's own translation ✓",
                      "zh": "与语法规则给出的译文一致 ✓"},
    "grammar_differs": {"en": "differs from the grammar's translation {expected}",
                        "zh": "与语法规则给出的译文 {expected} 不同"},
    "decoded_with": {"en": "Decoded with {how}; {grammar}.", "zh": "解码方式：{how}；{grammar}。"},
    "source_tokens": {"en": "Source tokens: ", "zh": "源语言词元："},
    "length_limit": {"en": "Decoding stopped at the length limit before `</s>`.",
                     "zh": "还没有生成 `</s>` 就达到了长度上限，解码已停止。"},
    # -- tabs (the English label is also the view's id) and their explanations --------------
    "tab_positional": {"en": "Positional encoding", "zh": "位置编码"},
    "tab_masks": {"en": "Masks", "zh": "掩码"},
    "tab_encoder": {"en": "Encoder self-attention", "zh": "编码器自注意力"},
    "tab_decoder": {"en": "Decoder self-attention", "zh": "解码器自注意力"},
    "tab_cross": {"en": "Cross-attention", "zh": "交叉注意力"},
    "tab_inside": {"en": "Inside one head", "zh": "单个注意力头的内部"},
    "explain_positional": {
        "en": "Attention alone ignores word order, so each token's embedding (scaled by "
              "√d_model) gets a fixed vector added that depends only on its position: "
              "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(…). "
              "Low dimensions oscillate fast, high ones slowly, so every position has its own "
              "pattern.",
        "zh": "注意力本身并不考虑词序，所以每个词元的嵌入向量（先乘以 √d_model）都要加上一个"
              "只由位置决定的固定向量：PE(pos, 2i) = sin(pos / 10000^(2i/d_model))，"
              "PE(pos, 2i+1) = cos(…)。低维分量变化得快，高维分量变化得慢，"
              "因此每个位置都有自己独特的编码模式。",
    },
    "explain_masks": {
        "en": "Masks say which keys a query may **not** look at (True = blocked, shown dark). "
              "The padding mask hides `<pad>` tokens added to make a batch rectangular; the "
              "look-ahead (sequence) mask stops decoder position t from seeing positions after "
              "t; the decoder combines both. Blocked scores get −∞ before the softmax, so their "
              "weight is exactly 0.",
        "zh": "掩码规定了一个查询**不能**看哪些键（True = 屏蔽，显示为深色）。填充掩码遮住那些"
              "为了把一个批次补成整齐的矩形而添加的 `<pad>` 词元；序列掩码（又称前瞻掩码）"
              "让解码器的第 t 个位置看不到 t 之后的位置；解码器把这两种掩码合在一起使用。"
              "被屏蔽的得分在 softmax 之前被设为 −∞，所以它们的权重恰好为 0。",
    },
    "explain_encoder": {
        "en": "Every source token attends to every source token (rows: queries, columns: keys; "
              "each row sums to 1). This is computed once per sentence, before decoding starts.",
        "zh": "编码器自注意力：每个源语言词元都会关注所有源语言词元（行是查询，列是键；每一行的"
              "权重之和为 1）。每个句子只在解码开始之前计算一次。",
    },
    "explain_decoder": {
        "en": "Each decoder position attends to itself and to earlier positions only (the "
              "look-ahead mask blanks the upper triangle). Rows appear one by one as you step "
              "through decoding.",
        "zh": "解码器自注意力：解码器的每个位置只能关注它自己和它之前的位置（序列掩码遮住了"
              "右上方的三角区域）。随着你一步步解码，这些行会逐行出现。",
    },
    "explain_cross": {
        "en": "Encoder-decoder attention: each decoder position (query) looks at the encoded "
              "source tokens (keys) to decide what to translate next. The last row is the step "
              "being decoded.",
        "zh": "交叉注意力（编码器-解码器注意力）：解码器的每个位置（查询）查看编码器输出的"
              "源语言词元（键），以决定接下来翻译什么。最后一行就是当前正在解码的这一步。",
    },
    "explain_inside": {
        "en": "One head's whole computation on your sentence: the queries, keys and values, the "
              "scores QKᵀ, their scaling by √d_k, the mask (−∞ where blocked), the softmax and "
              "the weighted sum of the values. It sits inside every attention block of figure 1 "
              "of the paper; the weights in step 5 are the model's own.",
        "zh": "用你的句子完整演示一个注意力头的计算：查询、键和值，得分 QKᵀ，除以 √d_k 缩放，"
              "掩码（被屏蔽处为 −∞），softmax，以及对值的加权求和。论文图 1 中的每个注意力模块"
              "里都在进行这样的计算；第 5 步中的权重就是模型实际使用的权重。",
    },
    # -- decoding strategy (ui/controls.py) ------------------------------------------------------
    "decoding": {"en": "Decoding", "zh": "解码"},
    "strategy": {"en": "Strategy", "zh": "解码策略"},
    "strategy_help": {
        "en": "Greedy takes the most probable token at every step; beam search keeps several "
              "hypotheses; sampling draws tokens.",
        "zh": "贪心解码在每一步都选概率最大的词元；束搜索同时保留多个候选假设；"
              "采样则按概率随机抽取词元。",
    },
    "strategy_greedy": {"en": "Greedy", "zh": "贪心解码"},
    "strategy_beam": {"en": "Beam search", "zh": "束搜索"},
    "strategy_sampling": {"en": "Sampling", "zh": "采样"},
    "num_beams": {"en": "Number of beams (num_beams)", "zh": "束宽（num_beams）"},
    "length_penalty": {"en": "Length penalty", "zh": "长度惩罚"},
    "length_penalty_help": {
        "en": "Score = log-probability / length^penalty: above 0 favours longer outputs.",
        "zh": "得分 = 对数概率 / 长度^惩罚系数：系数大于 0 时偏向更长的输出。",
    },
    "temperature": {"en": "Temperature", "zh": "温度"},
    "temperature_help": {
        "en": "Divides the logits: below 1 sharpens the distribution, above 1 flattens it; 0 "
              "is greedy.",
        "zh": "logits 先除以温度：温度小于 1 时分布更尖锐，大于 1 时更平坦；"
              "温度为 0 就是贪心解码。",
    },
    "top_k": {"en": "Top-k (0 = off)", "zh": "Top-k（0 = 不限制）"},
    "top_k_help": {"en": "Sample only among the k most probable tokens.",
                   "zh": "只在概率最高的 k 个词元中采样。"},
    "top_p": {"en": "Top-p (nucleus; 1 = off)", "zh": "Top-p（核采样；1 = 不限制）"},
    "top_p_help": {
        "en": "Sample only among the most probable tokens whose probabilities add up to p.",
        "zh": "只在概率最高、累计概率刚好达到 p 的那些词元中采样。",
    },
    "seed": {"en": "Seed", "zh": "随机种子"},
    "sample_again": {"en": "🎲 Sample again", "zh": "🎲 重新采样"},
    "sample_again_help": {"en": "Draw again with the next seed.",
                          "zh": "换下一个随机种子，再采样一次。"},
    "describe_beam": {"en": "beam search, {beams} beams, length penalty {penalty:.1f}",
                      "zh": "束搜索，束宽 {beams}，长度惩罚 {penalty:.1f}"},
    "describe_temperature": {"en": "temperature {value:.2f}", "zh": "温度 {value:.2f}"},
    "describe_top_k": {"en": "top-k {value}", "zh": "top-k {value}"},
    "describe_top_p": {"en": "top-p {value:.2f}", "zh": "top-p {value:.2f}"},
    "describe_sampling": {"en": "sampling ({parts}, seed {seed})",
                          "zh": "采样（{parts}，随机种子 {seed}）"},
    "describe_separator": {"en": ", ", "zh": "，"},
    "describe_greedy": {"en": "greedy", "zh": "贪心解码"},
    # -- the step-through panel (ui/stepper.py) --------------------------------------------------
    "first": {"en": "First", "zh": "第一步"},
    "previous": {"en": "◀ Previous", "zh": "◀ 上一步"},
    "pause": {"en": "Pause", "zh": "暂停"},
    "play": {"en": "Play", "zh": "播放"},
    "next": {"en": "Next ▶", "zh": "下一步 ▶"},
    "last": {"en": "Last", "zh": "最后一步"},
    "speed": {"en": "Speed", "zh": "播放速度"},
    "speed_help": {"en": "Time per step while playing.", "zh": "播放时每一步停留的时间。"},
    "speed_option": {"en": "{seconds} s", "zh": "{seconds} 秒"},
    "decoding_step": {"en": "Decoding step", "zh": "解码步"},
    "decoding_step_help": {
        "en": "Step k: the decoder has read k tokens and picks the next one.",
        "zh": "第 k 步：解码器已经读入 k 个词元，正在选择下一个词元。",
    },
    "only_step": {"en": "Decoding step 1 of 1", "zh": "解码第 1 步（共 1 步）"},
    "step_of": {"en": "**Step {k} of {n}**", "zh": "**第 {k} 步（共 {n} 步）**"},
    "decoder_input_so_far": {"en": "Decoder input so far:  \n", "zh": "目前的解码器输入：  \n"},
    "forced_token": {"en": "Forced token", "zh": "强制指定的词元"},
    "chosen_token": {"en": "Chosen next token", "zh": "选出的下一个词元"},
    "token_with_probability": {
        "en": "{how}: {token} with probability **{prob:.1%}** (entropy {entropy:.2f} nats)",
        "zh": "{how}：{token}，概率为 **{prob:.1%}**（熵为 {entropy:.2f} 奈特）",
    },
    "output_so_far": {"en": "Output so far:  \n", "zh": "目前的输出：  \n"},
    "top_probs_title": {"en": "Top-{n} next-token probabilities",
                        "zh": "下一个词元概率最高的 {n} 个候选"},
    "step_layer": {"en": "Layer for this step's attention", "zh": "查看本步注意力的层"},
    "head_tick": {"en": "head {head}", "zh": "头 {head}"},
    "step_cross_title": {
        "en": "Step {k}: cross-attention of query {query} over the source, every head",
        "zh": "第 {k} 步：查询 {query} 对源句的交叉注意力（所有头）",
    },
    "step_self_title": {"en": "Step {k}: decoder self-attention, every head",
                        "zh": "第 {k} 步：解码器自注意力（所有头）"},
    # -- layer and head pickers, axis labels -------------------------------------------------
    "layer": {"en": "Layer", "zh": "层"},
    "head": {"en": "Head", "zh": "注意力头"},
    "layer_option": {"en": "Layer {layer}", "zh": "第 {layer} 层"},
    "head_option": {"en": "Head {head}", "zh": "第 {head} 个头"},
    "all_heads": {"en": "All heads", "zh": "所有头"},
    "view_all_heads_title": {"en": "{view}, layer {layer}, all heads",
                             "zh": "{view}，第 {layer} 层，所有头"},
    "view_head_title": {"en": "{view}, layer {layer}, head {head}",
                        "zh": "{view}，第 {layer} 层，第 {head} 个头"},
    "query_source_token": {"en": "Query: source token", "zh": "查询：源语言词元"},
    "key_source_token": {"en": "Key: source token", "zh": "键：源语言词元"},
    "query_decoder_input": {"en": "Query: decoder input", "zh": "查询：解码器输入"},
    "key_decoder_input": {"en": "Key: decoder input", "zh": "键：解码器输入"},
    "query_source": {"en": "Query: source", "zh": "查询：源句"},
    "key_source": {"en": "Key: source", "zh": "键：源句"},
    "head_axis": {"en": "Head", "zh": "注意力头"},
    "query_axis": {"en": "Query", "zh": "查询"},
    "token_axis": {"en": "Token", "zh": "词元"},
    "position_axis": {"en": "Position", "zh": "位置"},
    "dimension_axis": {"en": "Dimension", "zh": "维度"},
    # -- positional-encoding tab (ui/panels.py, ui/teaching.py) --------------------------------
    "positions_of": {"en": "Positions of", "zh": "要查看的序列"},
    "side_source": {"en": "Source sentence", "zh": "源句"},
    "side_decoder": {"en": "Decoder input", "zh": "解码器输入"},
    "pe_heatmap_title_source": {
        "en": "Positional encoding added to the source sentence (d_model = {d_model})",
        "zh": "加到源句上的位置编码（d_model = {d_model}）",
    },
    "pe_heatmap_title_decoder": {
        "en": "Positional encoding added to the decoder input (d_model = {d_model})",
        "zh": "加到解码器输入上的位置编码（d_model = {d_model}）",
    },
    "pe_dims": {"en": "Dimensions to plot (even = sin, odd = cos)",
                "zh": "要绘制的维度（偶数维 = sin，奇数维 = cos）"},
    "pe_curves_title": {"en": "Positional encoding by dimension", "zh": "各维度的位置编码曲线"},
    "pe_no_dims": {"en": "Pick at least one dimension to plot its curve.",
                   "zh": "请至少选择一个维度来绘制它的曲线。"},
    "pe_similarity_title": {"en": "PE(i) · PE(j): nearby positions are similar",
                            "zh": "PE(i) · PE(j)：相邻位置的编码彼此相似"},
    "pe_show": {"en": "Show", "zh": "显示"},
    "pe_part_embedding": {"en": "Token embedding × √d_model", "zh": "词嵌入 × √d_model"},
    "pe_part_positional": {"en": "Positional encoding", "zh": "位置编码"},
    "pe_part_sum": {"en": "Sum", "zh": "两者之和"},
    "pe_parts_title": {"en": "{what}: what the first layer reads",
                       "zh": "{what}：第一层读到的输入"},
    "pe_experiment": {"en": "**Experiment: switch the positional encodings off or shuffle them**",
                      "zh": "**实验：关掉位置编码，或者打乱位置**"},
    "pe_mode": {"en": "Positional encodings", "zh": "位置编码"},
    "pe_mode_normal": {"en": "as trained", "zh": "与训练时相同"},
    "pe_mode_none": {"en": "off", "zh": "关闭"},
    "pe_mode_shuffled": {"en": "shuffled positions", "zh": "打乱位置"},
    "pe_mode_hint": {"en": "Pick 'off' or 'shuffled' to decode the same sentence without word "
                           "order.",
                     "zh": "选择“关闭”或“打乱位置”，看看同一个句子在没有词序信息时如何解码。"},
    "pe_compare": {"en": "As trained: {trained}  \n{label}: {other}",
                   "zh": "与训练时相同：{trained}  \n{label}：{other}"},
    "pe_compare_none": {"en": "Off", "zh": "关闭位置编码"},
    "pe_compare_shuffled": {"en": "Shuffled", "zh": "打乱位置"},
    "pe_exp_label_normal": {"en": "as trained", "zh": "与训练时相同"},
    "pe_exp_label_none": {"en": "none", "zh": "关闭位置编码"},
    "pe_exp_label_shuffled": {"en": "shuffled", "zh": "打乱位置"},
    "pe_exp_title": {"en": "Encoder self-attention, layer {layer} ({label})",
                     "zh": "编码器自注意力，第 {layer} 层（{label}）"},
    # -- masks tab ----------------------------------------------------------------------------
    "padded_by_hand": {"en": "This sentence, padded by hand", "zh": "手动填充这个句子"},
    "pad_slider": {
        "en": "Pad both sides with this many `<pad>` tokens, as in a batch with longer sentences",
        "zh": "在源句和解码器输入末尾各补上这么多个 `<pad>` 词元，就像和更长的句子放在同一个批次里",
    },
    "any_query": {"en": "any query", "zh": "任意查询"},
    "mask_source_padding_title": {"en": "Source padding mask (key_padding_mask)",
                                  "zh": "源句填充掩码（key_padding_mask）"},
    "mask_encoder_title": {"en": "Encoder self-attention mask", "zh": "编码器自注意力掩码"},
    "mask_cross_title": {"en": "Cross-attention (memory) mask",
                         "zh": "交叉注意力（memory）掩码"},
    "mask_lookahead_title": {"en": "Look-ahead mask (subsequent_mask)",
                             "zh": "序列掩码 / 前瞻掩码（subsequent_mask）"},
    "mask_decoder_title": {"en": "Decoder mask = padding OR look-ahead",
                           "zh": "解码器掩码 = 填充掩码 或 前瞻掩码"},
    # -- the padded batch (ui/teaching.py) -----------------------------------------------------
    "batch_header": {"en": "A real padded batch", "zh": "一个真实的填充批次"},
    "batch_text": {"en": "2 to 4 sentences, one per line", "zh": "2 到 4 个英文句子，每行一个"},
    "batch_error": {"en": "{error}", "zh": "这批句子无法处理。原因（英文）：{error}"},
    "batch_caption": {
        "en": "The shorter sentences are padded with `<pad>` (id 0) to the longest; the padding "
              "mask blocks those columns for every query.",
        "zh": "较短的句子用 `<pad>`（id 0）补齐到最长句子的长度；填充掩码对每个查询都屏蔽这些列。",
    },
    "batch_source_ids": {"en": "**Source ids (B × S)**", "zh": "**源句词元 id（B × S）**"},
    "batch_decoder_inputs": {"en": "**Decoder inputs (B × T)**",
                             "zh": "**解码器输入（B × T）**"},
    "batch_row": {"en": "sentence {n}", "zh": "句子 {n}"},
    "batch_sentence": {"en": "Sentence", "zh": "句子"},
    "batch_source_mask_title": {"en": "Source padding mask (encoder)",
                                "zh": "源句填充掩码（编码器）"},
    "batch_decoder_mask_title": {"en": "Decoder mask: padding OR look-ahead",
                                 "zh": "解码器掩码：填充掩码 或 前瞻掩码"},
    "batch_cross_mask_title": {"en": "Cross-attention mask", "zh": "交叉注意力掩码"},
    "batch_encoder_title": {"en": "Encoder self-attention in the batch",
                            "zh": "批次中的编码器自注意力"},
    "batch_cross_title": {"en": "Cross-attention in the batch", "zh": "批次中的交叉注意力"},
    "col_sentence": {"en": "sentence", "zh": "句子"},
    "col_in_batch": {"en": "in the batch", "zh": "批次中的译文"},
    "col_alone": {"en": "alone", "zh": "单独解码的译文"},
    "col_same_output": {"en": "same output", "zh": "译文相同"},
    "col_diff_encoder": {"en": "max |Δ| encoder", "zh": "编码器最大 |Δ|"},
    "col_diff_decoder": {"en": "max |Δ| decoder", "zh": "解码器最大 |Δ|"},
    "col_diff_cross": {"en": "max |Δ| cross", "zh": "交叉注意力最大 |Δ|"},
    "col_pad_weight": {"en": "weight on <pad>", "zh": "<pad> 上的权重"},
    "batch_same": {
        "en": "Every sentence decodes as it does alone, and its attention over its real tokens "
              "matches to {worst:.1e} (≤ 1e-5); <pad> keys get weight 0.",
        "zh": "每个句子在批次中的译文都与单独解码时相同，它在真实词元上的注意力与单独解码时"
              "相差不超过 {worst:.1e}（≤ 1e-5）；<pad> 键的权重为 0。",
    },
    "batch_differs": {"en": "The batch differs from the sentences alone (max |Δ| {worst:.1e}).",
                      "zh": "批次的结果与单独解码的结果不同（最大 |Δ| 为 {worst:.1e}）。"},
    # -- inside one head (ui/teaching.py) ------------------------------------------------------
    "ih_kind": {"en": "Attention", "zh": "注意力类型"},
    "ih_query": {"en": "Query token", "zh": "查询词元"},
    "detail_weight": {"en": "weight", "zh": "权重"},
    "ih_step1": {"en": "**1. Queries, keys and values of this head**",
                 "zh": "**1. 这个头的查询、键和值**"},
    "ih_step1_text": {
        "en": "X: the {n} query positions' inputs to this layer; X': the keys' (the encoder "
              "output for cross-attention). Each head projects d_model = {d_model} numbers to "
              "d_k = {d_k}.",
        "zh": "X：这一层在 {n} 个查询位置上的输入；X'：键所在位置的输入（交叉注意力中是编码器"
              "的输出）。每个头把 d_model = {d_model} 维的向量投影到 d_k = {d_k} 维。",
    },
    "dk_dimension": {"en": "d_k dimension", "zh": "d_k 维度"},
    "ih_step2": {"en": "**2. Raw scores**", "zh": "**2. 原始得分**"},
    "ih_step2_text": {"en": "How well each query matches each key (dot products).",
                      "zh": "每个查询与每个键的匹配程度（点积）。"},
    "ih_step3": {"en": "**3. Scaled scores**", "zh": "**3. 缩放后的得分**"},
    "ih_step3_text": {"en": "Divided by √{d_k} = {root:.2f} so the softmax does not saturate.",
                      "zh": "除以 √{d_k} = {root:.2f}，避免 softmax 进入饱和区。"},
    "ih_step4": {"en": "**4. The mask**", "zh": "**4. 掩码**"},
    "latex_allowed": {"en": "allowed", "zh": "允许"},
    "latex_blocked": {"en": "blocked", "zh": "屏蔽"},
    "ih_step4_blocked": {
        "en": "Blocked cells (grey) get −∞: look-ahead in the decoder, <pad> keys in a batch.",
        "zh": "被屏蔽的格子（灰色）设为 −∞：解码器中当前位置之后的位置，以及批次中的 <pad> 键。",
    },
    "ih_step4_none": {
        "en": "Nothing is blocked here: one sentence has no padding, and only the decoder's "
              "self-attention looks ahead.",
        "zh": "这里没有被屏蔽的格子：单个句子不需要填充，而只有解码器自注意力才需要屏蔽后面的"
              "位置。",
    },
    "ih_masked_title": {"en": "Masked scores", "zh": "加上掩码后的得分"},
    "ih_step5": {"en": "**5. Softmax**", "zh": "**5. Softmax 归一化**"},
    "ih_step5_text": {
        "en": "Each row becomes weights that sum to 1; a −∞ cell gets exactly 0. These are the "
              "model's own attention weights for this head.",
        "zh": "每一行变成和为 1 的权重；−∞ 的格子权重恰好为 0。这些正是模型在这个头上实际使用的"
              "注意力权重。",
    },
    "ih_weights_title": {"en": "Attention weights A", "zh": "注意力权重 A"},
    "ih_step6": {"en": "**6. Weighted sum of the values**", "zh": "**6. 对值加权求和**"},
    "ih_step6_text": {
        "en": "Each query's output is a mix of the value rows, {n} keys weighted by A. The "
              "heads' outputs are concatenated and multiplied by W_O.",
        "zh": "每个查询的输出是 {n} 个值向量按 A 中的权重混合的结果。多头注意力把各个头的输出"
              "拼接起来，再乘以 W_O。",
    },
    "ih_query_numbers": {"en": "**Query {i}: {token}, number by number**",
                         "zh": "**查询 {i}：{token}，逐项计算**"},
    "col_key": {"en": "key", "zh": "键"},
    "col_blocked": {"en": "blocked", "zh": "被屏蔽"},
    "col_weight": {"en": "weight", "zh": "权重"},
    # -- branch, reference, beams (ui/compare.py) ----------------------------------------------
    "empty_tokens": {"en": "(empty)", "zh": "（空）"},
    "seq_probs_title": {"en": "Probability of each token (hatched = forced)",
                        "zh": "每个词元的概率（斜线 = 强制指定）"},
    "branch_expander": {"en": "Branch at step {k}: continue with another token instead of "
                              "{token}",
                        "zh": "在第 {k} 步分叉：不用 {token}，换一个词元继续解码"},
    "branch_pick": {"en": "Another top candidate", "zh": "另一个高概率候选"},
    "branch_typed": {"en": "…or type any target token", "zh": "……或者输入任意一个目标词元"},
    "branch_typed_placeholder": {"en": "e.g. 他", "zh": "例如：他"},
    "branch_go": {"en": "Continue from here", "zh": "从这里继续"},
    "branch_error": {"en": "{error}", "zh": "无法从这里分叉。原因（英文）：{error}"},
    "branch_header": {"en": "Branch at step {k}", "zh": "在第 {k} 步分叉"},
    "branch_caption": {
        "en": "The first {kept} tokens are kept, {token} is forced at step {k}, and decoding "
              "continues from there.",
        "zh": "保留前 {kept} 个词元，在第 {k} 步强制使用 {token}，然后从那里继续解码。",
    },
    "branch_original": {"en": "Original", "zh": "原始译文"},
    "branch_column": {"en": "Branch: {token} at step {k}", "zh": "分支：第 {k} 步改用 {token}"},
    "branch_close": {"en": "Close the branch", "zh": "关闭分支"},
    "reference_header": {"en": "Compare with a reference translation", "zh": "与参考译文比较"},
    "reference": {"en": "Reference translation (Chinese)", "zh": "参考译文（中文）"},
    "reference_placeholder": {"en": "e.g. 我们为什么学习？", "zh": "例如：我们为什么学习？"},
    "reference_help": {
        "en": "The decoder is fed these tokens (teacher forcing); the chart shows the "
              "probability it gave each of them.",
        "zh": "把这些词元依次输入解码器（教师强制）；图中显示模型给每个词元的概率。",
    },
    "reference_error": {"en": "{error}", "zh": "无法给这个参考译文打分。原因（英文）：{error}"},
    "reference_agrees": {
        "en": "The model's own greedy choice agrees with the reference at every step.",
        "zh": "在每一步，模型自己的贪心选择都与参考译文一致。",
    },
    "reference_first_difference": {
        "en": "First difference at position {pos}: the reference has {ref} ({ref_prob:.1%}), "
              "the model would choose {top} ({top_prob:.1%}).",
        "zh": "第一处不同在第 {pos} 个位置：参考译文是 {ref}（{ref_prob:.1%}），"
              "模型自己会选 {top}（{top_prob:.1%}）。",
    },
    "reference_model_output": {"en": "Model output", "zh": "模型的译文"},
    "reference_forced": {"en": "Reference (teacher-forced)", "zh": "参考译文（教师强制）"},
    "beam_header": {"en": "Beam search: {n} beams", "zh": "束搜索：束宽 {n}"},
    "beam_option": {"en": "{i}. {text}  (score {score:.3f})",
                    "zh": "{i}. {text}  （得分 {score:.3f}）"},
    "beam_pick": {"en": "Show the maps of hypothesis", "zh": "显示这个假设的注意力图"},
    "beam_tree_title": {"en": "Candidates at each step (best on top)",
                        "zh": "每一步的候选（最好的在最上面）"},
    "col_hypothesis": {"en": "hypothesis", "zh": "假设"},
    "col_score": {"en": "score", "zh": "得分"},
    "col_tokens": {"en": "tokens", "zh": "词元数"},
    "col_finished": {"en": "finished", "zh": "已结束"},
    "beam_caption": {
        "en": "score = log p / tokens^length_penalty. Blue: kept beams, green stars: finished "
              "hypotheses, grey crosses: pruned candidates.",
        "zh": "得分 = log p / 词元数^length_penalty。蓝色：保留的束；绿色星形：已结束的假设；"
              "灰色叉号：被剪枝的候选。",
    },
}

# Text that the ``viz`` builders write themselves (axis, colour-bar and legend titles, legend
# entries, subplot titles): translated after the figure is built (``ui.charts.localize``).
# Whole strings, or patterns where "{n}" stands for a number.
VIZ_STRINGS: dict[str, dict[str, str]] = {
    "Probability": {"en": "Probability", "zh": "概率"},
    "Token": {"en": "Token", "zh": "词元"},
    "Decoding step": {"en": "Decoding step", "zh": "解码步"},
    "Rank within the step": {"en": "Rank within the step", "zh": "本步中的排名"},
    "Query": {"en": "Query", "zh": "查询"},
    "Key": {"en": "Key", "zh": "键"},
    "Weight": {"en": "Weight", "zh": "权重"},
    "Value": {"en": "Value", "zh": "值"},
    "Mask": {"en": "Mask", "zh": "掩码"},
    "Position": {"en": "Position", "zh": "位置"},
    "Dimension": {"en": "Dimension", "zh": "维度"},
    "Dimension i": {"en": "Dimension i", "zh": "维度 i"},
    "allowed (False)": {"en": "allowed (False)", "zh": "允许（False）"},
    "blocked (True)": {"en": "blocked (True)", "zh": "屏蔽（True）"},
    "allowed": {"en": "allowed", "zh": "允许"},
    "blocked": {"en": "blocked", "zh": "屏蔽"},
    "blocked (−∞)": {"en": "blocked (−∞)", "zh": "屏蔽（−∞）"},
    "selected hypothesis": {"en": "selected hypothesis", "zh": "选中的假设"},
    "kept": {"en": "kept", "zh": "保留"},
    "finished": {"en": "finished", "zh": "已结束"},
    "pruned": {"en": "pruned", "zh": "已剪枝"},
    "Head {n}": {"en": "Head {n}", "zh": "第 {n} 个头"},
    "dim {n} (sin)": {"en": "dim {n} (sin)", "zh": "第 {n} 维（sin）"},
    "dim {n} (cos)": {"en": "dim {n} (cos)", "zh": "第 {n} 维（cos）"},
}
# Pieces of the viz builders' hover templates, replaced wherever they occur, in this order.
VIZ_HOVER: dict[str, dict[str, str]] = {
    "blocked by the mask: −∞ before the softmax, weight 0": {
        "en": "blocked by the mask: −∞ before the softmax, weight 0",
        "zh": "被掩码屏蔽：softmax 之前为 −∞，权重为 0"},
    "Query %{y}": {"en": "Query %{y}", "zh": "查询 %{y}"},
    "Key %{x}": {"en": "Key %{x}", "zh": "键 %{x}"},
    "Weight: ": {"en": "Weight: ", "zh": "权重："},
    "Value: ": {"en": "Value: ", "zh": "值："},
    "Probability: ": {"en": "Probability: ", "zh": "概率："},
    "Position %{": {"en": "Position %{", "zh": "位置 %{"},
    "Dimension %{": {"en": "Dimension %{", "zh": "维度 %{"},
    " (row %{y})": {"en": " (row %{y})", "zh": "（第 %{y} 行）"},
    " (column %{x})": {"en": " (column %{x})", "zh": "（第 %{x} 列）"},
}

# The views, by their ids (the English labels); the keys of their labels in ``STRINGS``.
VIEW_KEYS = {
    "Positional encoding": "tab_positional",
    "Masks": "tab_masks",
    "Encoder self-attention": "tab_encoder",
    "Decoder self-attention": "tab_decoder",
    "Cross-attention": "tab_cross",
    "Inside one head": "tab_inside",
}
TABS = tuple(VIEW_KEYS)
EXPLAIN_KEYS = {view: key.replace("tab_", "explain_") for view, key in VIEW_KEYS.items()}

_VIZ_NUMBERED = [(re.compile(re.escape(en).replace(r"\{n\}", r"(\d+)") + "$"), zh)
                 for en, zh in ((e["en"], e["zh"]) for e in VIZ_STRINGS.values())
                 if "{n}" in en]


def lang() -> str:
    """The session's language code: "en" (the default, also for a bad value) or "zh"."""
    try:
        return LANGUAGES.get(st.session_state.get(LANG_KEY), "en")
    except Exception:  # no session (a bare import): English
        return "en"


def t(key: str, **fmt) -> str:
    """String ``key`` in the session's language, formatted with ``fmt``."""
    entry = STRINGS[key]
    return entry.get(lang(), entry["en"]).format(**fmt)


def explain(view: str) -> str:
    """The explanation shown at the top of tab ``view`` (a view id)."""
    return t(EXPLAIN_KEYS[view])


def view_label(view: str) -> str:
    """The tab label of view ``view`` (an id) in the session's language."""
    return t(VIEW_KEYS[view])


def view_id(label: str | None) -> str | None:
    """The view whose tab label, in any language, is ``label``; None if there is none."""
    for view, key in VIEW_KEYS.items():
        if label in STRINGS[key].values():
            return view
    return None


def viz_text(text: str) -> str:
    """A string that a ``viz`` builder wrote, in the session's language (unknown: as is)."""
    code = lang()
    entry = VIZ_STRINGS.get(text)
    if entry is not None:
        return entry.get(code, text)
    for pattern, zh in _VIZ_NUMBERED if code == "zh" else ():
        if m := pattern.match(text):
            return zh.format(n=m.group(1))
    return text


def labels(options, label: Callable[[Any], str]) -> Callable[[Any], str]:
    """A widget's ``format_func``: ``label(option)`` for each of ``options``, in the language
    of this run. The labels are fixed now because the function is kept and called again
    outside the run (by Streamlit's AppTest), where the session's language is not known."""
    table = {option: label(option) for option in options}
    return lambda option: table.get(option, str(option))


def layer_label(layer) -> str:
    """A layer picker's option: "Layer 2" / "第 2 层"."""
    return t("layer_option", layer=layer)


def head_label(head) -> str:
    """A head picker's option: "Head 3" / "第 3 个头"."""
    return t("head_option", head=head)


def viz_hover(template: str) -> str:
    """A viz builder's hover template with its own labels in the session's language."""
    head, sep, rest = template.partition("<br>")
    template = viz_text(head) + sep + rest  # "Head 3<br>…", "dim 4 (sin)<br>…"
    for piece, entry in VIZ_HOVER.items():
        template = template.replace(piece, entry.get(lang(), piece))
    return template


def placeholders(text: str) -> set[str]:
    """The names of the ``str.format`` fields in ``text``."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


class LocalText(str):
    """A string that shows as ``t(key)`` in the session's language when ``str()`` is taken.

    For the spinners of the cached functions: their message is fixed when the function is
    decorated, and Streamlit takes ``str()`` of it each time it shows the spinner, in the
    session that is waiting. Anywhere else it is the English text."""

    def __new__(cls, key: str) -> LocalText:
        obj = super().__new__(cls, STRINGS[key]["en"])
        obj.key = key
        return obj

    def __str__(self) -> str:
        return t(self.key)


# -- the language switch -------------------------------------------------------------------------

# Widgets whose option labels depend on the language: the browser sends back the label it
# shows, which the next run (in the other language) would not recognise, so the choice is
# re-set by value when the language changes.
_KEEP_ON_SWITCH = ("strategy", "speed", "step_layer", "pe_side", "pe_part", "pe_mode",
                   "pe_layer", "batch_layer", "batch_head", "ih_kind", "ih_layer", "ih_head",
                   "branch_layer", "branch_head", "ref_layer", "ref_head", "hypothesis",
                   *(f"{view}_{part}" for view in TABS for part in ("layer", "head")))


def _keep_choices() -> None:
    state = st.session_state
    for key in _KEEP_ON_SWITCH:
        if key in state:
            state[key] = state[key]
    view = view_id(state.get("view"))
    if view is not None:
        state["view"] = view_label(view)


def language_selector() -> str:
    """The language radio at the top of the sidebar, bound to ``?lang=``; returns "en"/"zh".

    A short form in the URL on the first load (``?lang=zh``) selects its language; the
    binding itself ignores (and removes) any value that is not an option."""
    state = st.session_state
    if LANG_KEY not in state:
        raw = st.query_params.get(LANG_KEY)
        alias = URL_ALIASES.get(raw.strip().lower()) if isinstance(raw, str) else None
        if alias is not None and alias != raw:
            state[LANG_KEY] = alias  # the binding then drops the short form from the URL
    st.sidebar.radio(LANG_LABEL, list(LANGUAGES), key=LANG_KEY, horizontal=True,
                     bind="query-params", on_change=_keep_choices)
    return lang()


def sync_view() -> None:
    """Before the tabs are drawn: a view stored under ``view`` by its label in the other
    language (after a switch, or set by code) becomes its label in this language."""
    state = st.session_state
    current = state.get("view")
    view = view_id(current)
    if view is not None and current != view_label(view):
        state["view"] = view_label(view)
