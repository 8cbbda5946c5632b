# cython: language_level=3
"""zdt.predict's entropy stage 3 (the spec's "Stage 3", docs/codecs/predict.md): its constants,
tokens, contexts and the coder's state, with the steps a traversal runs per element, inline,
nogil. The encoder, the model choice and the frequency tables' bytes are zdt.kernels._ans.

Symbols are coded in the predictor's visit order; each one's context is its level group and
the classes of the symbols of its two context neighbours (visited before it), so the decoder
decodes each symbol where it reconstructs the element, in one pass.
"""

from libc.stdint cimport int16_t, uint8_t, uint16_t, uint32_t

cdef enum:
    TOKENS = 64             # symbols 0..15 are tokens of their own; above, 4 tokens an octave
    CLASSES = 5             # a neighbour's class (CLASS16)
    PAIRS = 15              # unordered pairs of the five classes
    GROUPS = 4              # level groups: s = 1, 2, 4, coarser
    FINE = 60               # GROUPS x PAIRS fine contexts
    MODELS = 4              # the context models (fine context -> table): 1, 4, 16, 60 tables
    SCALE = 12              # frequencies sum to 2^12
    M_TOTAL = 4096
    ANS_L = 65536           # the state lies in [2^16, 2^32); words of 16 bits

cdef extern from *:
    """
    /* the class of a symbol < 16: 0 code 0; 1 codes +-1; 2 codes -3..3 otherwise; 3 larger
       codes and raw values (symbol 0); 4 the fill value (symbol 1) */
    static const unsigned char zdt_ans_class16[16] = {3, 4, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3};
    /* the pair of two classes a, b (lo = min, hi = max): hi (hi + 1) / 2 + lo, at [5 a + b] */
    static const unsigned char zdt_ans_pair[25] = {0, 1, 3, 6, 10, 1, 2, 4, 7, 11, 3, 4, 5, 8, 12,
                                                    6, 7, 8, 9, 13, 10, 11, 12, 13, 14};
    """
    const uint8_t CLASS16 "zdt_ans_class16"[16]
    const uint8_t PAIR "zdt_ans_pair"[25]

cdef extern from *:
    int __builtin_clz(unsigned int) nogil


cdef inline int sym_class(uint16_t s) noexcept nogil:
    return CLASS16[s if s < 16 else 15]


cdef inline int token_of(uint32_t s, int* nbits, uint32_t* bits) noexcept nogil:
    """The token of symbol s, its extra bits' count and value."""
    cdef int e
    if s < 16:
        nbits[0] = 0
        bits[0] = 0
        return <int>s
    e = 31 - __builtin_clz(s)
    nbits[0] = e - 2
    bits[0] = s & ((1u << (e - 2)) - 1)
    return 16 + (e - 4) * 4 + <int>((s >> (e - 2)) & 3)


cdef struct Ctx:
    # a level group's contexts by the classes a, b of the two context neighbours, at
    # (a << 3) | b: encoding, the fine context; decoding, its table (-1: empty)
    int16_t of[40]


cdef inline void make_ctx(Ctx* cx, int group, const int16_t* table) noexcept nogil:
    """The contexts of level group `group`; `table`: each fine context's table when decoding,
    NULL when encoding."""
    cdef int a, b, fine
    for a in range(CLASSES):
        for b in range(CLASSES):
            fine = group * PAIRS + PAIR[5 * a + b]
            cx.of[(a << 3) | b] = table[fine] if table != NULL else fine


cdef inline int ctx_at(const Ctx* cx, const uint8_t* cls, Py_ssize_t ia, Py_ssize_t ib) noexcept nogil:
    """The context of an element whose context neighbours are ia and ib (the same index for a
    missing B); cls: the class of each element visited."""
    return cx.of[(cls[ia] << 3) | cls[ib]]


cdef struct Coder:
    # encoding: the symbols and contexts in visit order, the next one's place
    uint16_t* order_sym
    uint8_t* order_ctx
    Py_ssize_t j
    # decoding: two states, the j-th symbol in visit order coded by state j % 2 (x0 the next
    # symbol's: swapped after each)
    uint32_t x0
    uint32_t x1
    const uint16_t* words
    Py_ssize_t nwords
    Py_ssize_t pos
    const int16_t* table        # fine context -> table (-1: the table is empty)
    const uint8_t* lut          # table * 4096 + slot -> token (4 KB a table: 60 of them fit L2)
    const uint32_t* info        # table * 64 + token -> freq | start << 16
    int err                     # 1 the stream ran out, 2 a context without a table


cdef inline void copy_coder(Coder* to, const Coder* a) noexcept nogil:
    """Each loop works on a local copy of the coder, copied in and back field by field: the
    compiler then keeps the fields it uses in registers (no store to the chunk's arrays can
    alias a local; with a whole-struct copy it kept them in memory, and decoding measured 17%
    slower)."""
    to.order_sym = a.order_sym
    to.order_ctx = a.order_ctx
    to.j = a.j
    to.x0 = a.x0
    to.x1 = a.x1
    to.words = a.words
    to.nwords = a.nwords
    to.pos = a.pos
    to.table = a.table
    to.lut = a.lut
    to.info = a.info
    to.err = a.err


cdef inline void record_symbol(Coder* a, int k, int fine) noexcept nogil:
    """Encoding: symbol k and its fine context, next in visit order. (The (context, token)
    counts are a pass of their own, zdt.kernels._ans.histogram: counted here, the increments'
    read-modify-write chains made the traversal 1.5x slower.)"""
    a.order_sym[a.j] = <uint16_t>k
    a.order_ctx[a.j] = <uint8_t>fine
    a.j += 1


cdef inline bint refill(Coder* a) noexcept nogil:
    if a.x0 < ANS_L:
        if a.pos >= a.nwords:
            a.err = 1
            return False
        a.x0 = (a.x0 << 16) | a.words[a.pos]
        a.pos += 1
    return True


cdef inline int decode_token(Coder* a, int t) noexcept nogil:
    """The next token, decoded with table t (its element's context's) from state x0, which is
    refilled; -1 on a corrupt stream (a.err says why)."""
    cdef uint32_t entry, tok, slot
    if t < 0:
        a.err = 2
        return -1
    slot = a.x0 & (M_TOTAL - 1)
    tok = a.lut[(t << SCALE) + slot]
    entry = a.info[t * TOKENS + tok]
    a.x0 = (entry & 0xFFFF) * (a.x0 >> SCALE) + slot - (entry >> 16)
    if not refill(a):
        return -1
    return <int>tok


cdef inline int decode_extra_bits(Coder* a, int tok) noexcept nogil:
    """The symbol of token tok >= 16: its extra bits taken from x0, which is refilled; -1 on a
    corrupt stream."""
    cdef uint32_t nbits = (tok - 16) // 4 + 2
    cdef int k = <int>(((4u | ((tok - 16) & 3)) << nbits) | (a.x0 & ((1u << nbits) - 1)))
    a.x0 >>= nbits
    if not refill(a):
        return -1
    return k


cdef inline void next_state(Coder* a) noexcept nogil:
    """The next symbol is the other state's."""
    cdef uint32_t x = a.x0
    a.x0 = a.x1
    a.x1 = x
