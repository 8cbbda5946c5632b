/* Stage 3's bytes (docs/codecs/predict.md, "Stage 3"): the context model, its frequency
   tables, the two final states and the words. Every table and length is checked here, before
   the traversal starts. */
#include <stdlib.h>

#include "ans.h"

#define C16(k) (uint8_t)((ZDT_CLASS16_PACKED >> (4 * (k))) & 15u)
const uint8_t zdt__class16[16] = {C16(0), C16(1), C16(2),  C16(3),  C16(4),  C16(5),
                                  C16(6), C16(7), C16(8),  C16(9),  C16(10), C16(11),
                                  C16(12), C16(13), C16(14), C16(15)};
#undef C16

void zdt__ans_free(zdt__ans *a) {
    free(a->lut);
    free(a->info);
    free(a->zero);
    a->lut = NULL;
    a->info = NULL;
    a->zero = NULL;
}

#define ANS_CORRUPT(...) (zdt__ans_free(a), zdt__corrupt(err, "ANS stream", __VA_ARGS__))

int zdt__ans_read(zdt__ans *a, const uint8_t *buf, size_t len, size_t *end,
                  zdt_predict_error *err) {
    uint8_t empty[60];
    uint8_t tokens[ZDT_ANS_TOKENS];
    uint32_t f[ZDT_ANS_TOKENS];
    size_t pos = 1;
    int t, i, g, ca, cb;
    memset(a, 0, sizeof(*a));
    if (len < 1)
        return ANS_CORRUPT("the chunk ends before its ANS model");
    a->model = buf[0];
    if (a->model >= 4)
        return ANS_CORRUPT("unknown ANS context model %d", a->model);
    a->n_tables = zdt__ans_n_tables[a->model];
    a->lut = (uint8_t *)calloc((size_t)a->n_tables, 4096);
    a->info = (uint32_t *)calloc((size_t)a->n_tables * ZDT_ANS_TOKENS, sizeof(uint32_t));
    a->zero = (zdt__zero_entry *)calloc(4 * 40, sizeof(zdt__zero_entry));
    if (a->lut == NULL || a->info == NULL || a->zero == NULL) {
        zdt__ans_free(a);
        return zdt__nomem(err);
    }
    for (t = 0; t < a->n_tables; t++) {
        int k, prev = -1;
        uint32_t total = 0, start = 0;
        if (pos >= len)
            return ANS_CORRUPT("the chunk ends inside ANS table %d", t);
        k = buf[pos++];
        if (k > ZDT_ANS_TOKENS)
            return ANS_CORRUPT("ANS table %d lists %d tokens, more than 64", t, k);
        if ((size_t)k > len - pos)
            return ANS_CORRUPT("the chunk ends inside ANS table %d", t);
        for (i = 0; i < k; i++) {
            tokens[i] = buf[pos + (size_t)i];
            if (tokens[i] <= prev || tokens[i] >= ZDT_ANS_TOKENS)
                return ANS_CORRUPT("ANS table %d's tokens are not increasing below 64", t);
            prev = tokens[i];
        }
        pos += (size_t)k;
        for (i = 0; i < k - 1; i++) {
            /* LEB128: 7 bits a byte, low group first; at most 2 bytes */
            uint32_t v = 0;
            int shift = 0, b;
            do {
                if (pos >= len || shift >= 14)
                    return ANS_CORRUPT("ANS table %d has a truncated or overlong frequency", t);
                b = buf[pos++];
                v |= (uint32_t)(b & 0x7F) << shift;
                shift += 7;
            } while (b & 0x80);
            if (v < 1 || v >= 4096)
                return ANS_CORRUPT("ANS table %d gives token %d frequency %lu", t, tokens[i],
                                   (unsigned long)v);
            f[i] = v;
            total += v;
        }
        empty[t] = k == 0;
        if (k == 0)
            continue;
        if (total >= 4096)
            return ANS_CORRUPT("ANS table %d's frequencies sum past 4096", t);
        f[k - 1] = 4096 - total;
        for (i = 0; i < k; i++) {
            a->info[(size_t)t * ZDT_ANS_TOKENS + tokens[i]] = f[i] | (start << 16);
            memset(a->lut + ((size_t)t << 12) + start, tokens[i], f[i]);
            start += f[i];
        }
    }
    if (len - pos < 16)
        return ANS_CORRUPT("the chunk ends before its ANS state");
    a->x0 = zdt__le32(buf + pos);
    a->x1 = zdt__le32(buf + pos + 4);
    a->n_words = zdt__le64(buf + pos + 8);
    pos += 16;
    if (a->n_words > (len - pos) / 2)
        return ANS_CORRUPT("%llu ANS words run past the chunk's end",
                           (unsigned long long)a->n_words);
    if (a->x0 < ZDT_ANS_L || a->x1 < ZDT_ANS_L)
        return ANS_CORRUPT("an ANS state of (%lu, %lu) lies below 2^16", (unsigned long)a->x0,
                           (unsigned long)a->x1);
    a->words = buf + pos;
    *end = pos + 2 * (size_t)a->n_words;
    for (g = 0; g < 4; g++)
        for (ca = 0; ca < 5; ca++)
            for (cb = 0; cb < 5; cb++) {
                int lo = ca < cb ? ca : cb, hi = ca < cb ? cb : ca;
                int table = zdt__ans_table_of(a->model, 15 * g + hi * (hi + 1) / 2 + lo);
                uint32_t entry = a->info[(size_t)table * ZDT_ANS_TOKENS + 2];
                /* (token 2 tested first only where it is nearly every symbol: elsewhere the
                   test's mispredictions cost more than the lookup it saves) */
                if ((entry & 0xFFFFu) < ZDT_ANS_ZERO_MIN)
                    entry = 0;
                a->ctx[g][(ca << 3) | cb] = (int16_t)(empty[table] ? -1 : table);
                a->zero[40 * g + ((ca << 3) | cb)].start = entry >> 16;
                a->zero[40 * g + ((ca << 3) | cb)].freq = entry & 0xFFFFu;
            }
    return ZDT_PREDICT_OK;
}
