/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bundled example of `make example`: a tiny calculator that
 * evaluates each argument ("1+2*3", "x*(y+1)") by recursive descent
 * (expr -> term -> factor -> expr ...) and crashes on a variable it does
 * not know: lookup() returns NULL and factor() uses it. `hwt record`
 * traces a run, `hwt calls` shows the call structure and `hwt last` the
 * path to the crash.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct var {
	const char *name;
	int value;
	struct var *next;
};

static struct var *vars;
static const char *p;

static void define(const char *name, int value)
{
	struct var *v = malloc(sizeof(*v));

	if (!v)
		exit(1);
	v->name = name;
	v->value = value;
	v->next = vars;
	vars = v;
}

static struct var *lookup(const char *name, size_t len)
{
	for (struct var *v = vars; v; v = v->next)
		if (strlen(v->name) == len && !strncmp(v->name, name, len))
			return v;
	return NULL;
}

static int expr(void);

static int factor(void)
{
	const char *name;
	int v;

	if (*p == '(') {
		p++;
		v = expr();
		p++;		/* ')' */
		return v;
	}
	if (isdigit((unsigned char)*p))
		return (int)strtol(p, (char **)&p, 10);
	name = p;
	while (isalpha((unsigned char)*p))
		p++;
	return lookup(name, (size_t)(p - name))->value;	/* the bug */
}

static int term(void)
{
	int v = factor();

	while (*p == '*') {
		p++;
		v *= factor();
	}
	return v;
}

static int expr(void)
{
	int v = term();

	while (*p == '+') {
		p++;
		v += term();
	}
	return v;
}

int main(int argc, char **argv)
{
	define("x", 6);
	define("y", 7);
	for (int i = 1; i < argc; i++) {
		p = argv[i];
		printf("%s = %d\n", argv[i], expr());
		fflush(stdout);
	}
	return 0;
}
