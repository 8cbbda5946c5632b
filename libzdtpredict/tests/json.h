/* A small JSON reader for the golden manifests: a tree of values, strings unescaped (\uXXXX
   below 0x80 only: the manifests hold ASCII), numbers as binary64 (strtod). */
#ifndef ZDT_TEST_JSON_H
#define ZDT_TEST_JSON_H
#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } json_kind;

typedef struct json {
    json_kind kind;
    double number;          /* J_NUMBER; J_BOOL: 0 or 1 */
    char *string;           /* J_STRING */
    char *key;              /* a member of an object: its key */
    struct json *child;     /* J_ARRAY, J_OBJECT: the first item */
    struct json *next;      /* the next item of the parent */
} json;

/* the tree of text (NULL on a syntax error); json_free frees it */
json *json_parse(const char *text);
void json_free(json *j);
/* an object's member by key, NULL if none (or j is no object) */
const json *json_get(const json *j, const char *key);
size_t json_length(const json *j);
#endif
