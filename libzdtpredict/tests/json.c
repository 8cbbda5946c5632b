/* A small recursive-descent JSON reader (RFC 8259) for the golden manifests. */
#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct {
    const char *p;
    int depth;
} reader;

static void skip(reader *r) {
    while (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')
        r->p++;
}

static json *value(reader *r);

static char *string(reader *r) {
    size_t cap = 16, n = 0;
    char *s = (char *)malloc(cap);
    if (s == NULL || *r->p != '"')
        return free(s), (char *)NULL;
    r->p++;
    while (*r->p != '"') {
        char c = *r->p++;
        if (c == '\0')
            return free(s), (char *)NULL;
        if (c == '\\') {
            c = *r->p++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                char hex[5] = {0};
                long v;
                if (strlen(r->p) < 4)
                    return free(s), (char *)NULL;
                memcpy(hex, r->p, 4);
                r->p += 4;
                v = strtol(hex, NULL, 16);
                if (v >= 0x80)
                    return free(s), (char *)NULL;
                c = (char)v;
                break;
            }
            case '"': case '\\': case '/': break;
            default: return free(s), (char *)NULL;
            }
        }
        if (n + 2 > cap) {
            char *grown = (char *)realloc(s, cap *= 2);
            if (grown == NULL)
                return free(s), (char *)NULL;
            s = grown;
        }
        s[n++] = c;
    }
    r->p++;
    s[n] = '\0';
    return s;
}

static json *node(json_kind kind) {
    json *j = (json *)calloc(1, sizeof(json));
    if (j != NULL)
        j->kind = kind;
    return j;
}

static json *items(reader *r, char close, int keyed) {
    json *j = node(keyed ? J_OBJECT : J_ARRAY), **tail;
    if (j == NULL)
        return NULL;
    tail = &j->child;
    r->p++;
    skip(r);
    if (*r->p == close) {
        r->p++;
        return j;
    }
    for (;;) {
        char *key = NULL;
        json *item;
        skip(r);
        if (keyed) {
            key = string(r);
            skip(r);
            if (key == NULL || *r->p != ':')
                return free(key), json_free(j), (json *)NULL;
            r->p++;
        }
        item = value(r);
        if (item == NULL)
            return free(key), json_free(j), (json *)NULL;
        item->key = key;
        *tail = item;
        tail = &item->next;
        skip(r);
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        if (*r->p != close)
            return json_free(j), (json *)NULL;
        r->p++;
        return j;
    }
}

static json *value(reader *r) {
    json *j;
    char *end;
    skip(r);
    if (++r->depth > 64)
        return NULL;
    switch (*r->p) {
    case '{': j = items(r, '}', 1); break;
    case '[': j = items(r, ']', 0); break;
    case '"':
        j = node(J_STRING);
        if (j != NULL && (j->string = string(r)) == NULL)
            j = (json_free(j), (json *)NULL);
        break;
    case 't': case 'f': case 'n': {
        const char *word = *r->p == 't' ? "true" : *r->p == 'f' ? "false" : "null";
        if (strncmp(r->p, word, strlen(word)) != 0)
            return NULL;
        r->p += strlen(word);
        j = node(*word == 'n' ? J_NULL : J_BOOL);
        if (j != NULL)
            j->number = *word == 't';
        break;
    }
    default:
        j = node(J_NUMBER);
        if (j == NULL)
            break;
        j->number = strtod(r->p, &end);
        if (end == r->p)
            j = (json_free(j), (json *)NULL);
        else
            r->p = end;
    }
    r->depth--;
    return j;
}

json *json_parse(const char *text) {
    reader r;
    json *j;
    r.p = text;
    r.depth = 0;
    j = value(&r);
    skip(&r);
    if (j != NULL && *r.p != '\0')
        j = (json_free(j), (json *)NULL);
    return j;
}

void json_free(json *j) {
    while (j != NULL) {
        json *next = j->next;
        json_free(j->child);
        free(j->string);
        free(j->key);
        free(j);
        j = next;
    }
}

const json *json_get(const json *j, const char *key) {
    const json *c;
    if (j == NULL || j->kind != J_OBJECT)
        return NULL;
    for (c = j->child; c != NULL; c = c->next)
        if (strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

size_t json_length(const json *j) {
    size_t n = 0;
    const json *c;
    for (c = j != NULL ? j->child : NULL; c != NULL; c = c->next)
        n++;
    return n;
}
