/* test_sentsplit.c: sentences cut by hand, per language and rule. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "run_suite.h"
#include "text/sentsplit.h"

/*
 * The sentences of text under lang (clauses of those of more than
 * clause_words words), joined by '|', must be want (worked out by hand);
 * and whatever lies between them must be spaces, so that sentences and
 * gaps give back the line.
 */
static void cuts(const char *text, enum sent_lang lang, int clause_words,
		 const char *want)
{
	struct sent_span *sp = NULL;
	size_t cap = 0, len = strlen(text), i, j, prev = 0;
	long n = sentsplit(text, len, lang, clause_words, &sp, &cap);
	char got[512];
	size_t g = 0;

	ck_assert_int_ge(n, 0);
	for (i = 0; i < (size_t)n; i++) {
		ck_assert_uint_lt(sp[i].start, sp[i].end);
		ck_assert_uint_ge(sp[i].start, prev);
		for (j = prev; j < sp[i].start; j++)
			ck_assert(strchr(" \t\r", text[j]));
		if (i)
			got[g++] = '|';
		ck_assert_uint_lt(g + sp[i].end - sp[i].start, sizeof got);
		memcpy(got + g, text + sp[i].start, sp[i].end - sp[i].start);
		g += sp[i].end - sp[i].start;
		prev = sp[i].end;
	}
	for (j = prev; j < len; j++)
		ck_assert(strchr(" \t\r", text[j]));
	got[g] = 0;
	ck_assert_msg(strcmp(got, want) == 0, "'%s' (%s): got '%s', want '%s'",
		      text, lang == SENT_NONE ? "none" : "a language", got,
		      want);
	free(sp);
}

/* Cases worked out by hand: text, language, clause_words, sentences. */
static const struct {
	const char *text;
	enum sent_lang lang;
	int clause_words;
	const char *want;
} cases[] = {
	{ "Hola. Adiós.", SENT_ES, 0, "Hola.|Adiós." },
	{ "  Uno.  Dos!\tTres? ", SENT_NONE, 0, "Uno.|Dos!|Tres?" },
	{ "No stop here", SENT_EN, 0, "No stop here" },
	/* lower case after the stop: one sentence */
	{ "Dijo algo. y siguió", SENT_ES, 0, "Dijo algo. y siguió" },
	/* a digit opens one */
	{ "Tenía hijos. 3 de ellos", SENT_ES, 0, "Tenía hijos.|3 de ellos" },
	/* accented capitals (two-byte UTF-8) */
	{ "Fin. Él vino. Ángel.", SENT_ES, 0, "Fin.|Él vino.|Ángel." },
	/* punctuation only: one sentence, nothing lost */
	{ "!!! ??? ... .", SENT_NONE, 0, "!!! ??? ... ." },
	{ ". A", SENT_NONE, 0, ".|A" },
	/* the languages' prefixes */
	{ "El Sr. García llegó. Luego se fue.", SENT_ES, 0,
	  "El Sr. García llegó.|Luego se fue." },
	/* without Spanish's list, "Sr." ends a sentence */
	{ "El Sr. García llegó.", SENT_NONE, 0, "El Sr. García llegó." },
	{ "Vino el Dr. Smith. Se fue.", SENT_NONE, 0,
	  "Vino el Dr. Smith.|Se fue." },
	{ "Lo que es. Y mar. Set. Out.", SENT_NONE, 0,
	  "Lo que es.|Y mar.|Set.|Out." },
	{ "Mr. Smith met Dr. Jones. They talked.", SENT_EN, 0,
	  "Mr. Smith met Dr. Jones.|They talked." },
	{ "Frutas, p. ej. Manzanas. Y más.", SENT_ES, 0,
	  "Frutas, p. ej. Manzanas.|Y más." },
	{ "Obst, z. B. Äpfel. Dann mehr.", SENT_DE, 0,
	  "Obst, z. B. Äpfel.|Dann mehr." },
	{ "Libros, etc. Todo eso.", SENT_ES, 0, "Libros, etc. Todo eso." },
	{ "M. Dupont et Mme. Durand. Ils partent.", SENT_FR, 0,
	  "M. Dupont et Mme. Durand.|Ils partent." },
	{ "O Sr. Silva chegou. Depois saiu.", SENT_PT, 0,
	  "O Sr. Silva chegou.|Depois saiu." },
	{ "Il Dott. Rossi arriva. Poi parte.", SENT_IT, 0,
	  "Il Dott. Rossi arriva.|Poi parte." },
	/* initials, and abbreviations with inner dots */
	{ "J. R. R. Tolkien wrote. He died.", SENT_EN, 0,
	  "J. R. R. Tolkien wrote.|He died." },
	{ "Fruit, e.g. Apples. More.", SENT_EN, 0,
	  "Fruit, e.g. Apples.|More." },
	{ "Viven en EE.UU. Desde 1990.", SENT_ES, 0,
	  "Viven en EE.UU. Desde 1990." },
	/* "No." holds before a number only */
	{ "See No. 5 here.", SENT_EN, 0, "See No. 5 here." },
	{ "He said No. Then left.", SENT_EN, 0, "He said No.|Then left." },
	/* German ordinals; other languages split there */
	{ "Er kam am 3. Oktober. Dann ging er.", SENT_DE, 0,
	  "Er kam am 3. Oktober.|Dann ging er." },
	{ "They were 3. Then 4.", SENT_EN, 0, "They were 3.|Then 4." },
	{ "Pi es 3.14 más o menos. Sí.", SENT_ES, 0,
	  "Pi es 3.14 más o menos.|Sí." },
	{ "Visit www.example.com today. Or not.", SENT_EN, 0,
	  "Visit www.example.com today.|Or not." },
	/* a URL or address at the end keeps its dots; its last dot ends */
	{ "Visit www.example.com. Then rest.", SENT_EN, 0,
	  "Visit www.example.com.|Then rest." },
	{ "Go to example.org. Then rest.", SENT_EN, 0,
	  "Go to example.org.|Then rest." },
	{ "Write to ana.lopez@correo.es. Gracias.", SENT_ES, 0,
	  "Write to ana.lopez@correo.es.|Gracias." },
	{ "See http://a.b.c/x.html. Then.", SENT_EN, 0,
	  "See http://a.b.c/x.html.|Then." },
	{ "Dijo: \"Ven.\" Y fue.", SENT_ES, 0, "Dijo: \"Ven.\"|Y fue." },
	{ "(Véase arriba.) Luego.", SENT_ES, 0, "(Véase arriba.)|Luego." },
	{ "«Basta.» «Bien.»", SENT_ES, 0, "«Basta.»|«Bien.»" },
	/* German quotes close with what English opens with */
	{ "Er rief „Halt.“ „Nein.“ Dann »Gut.« Ende.", SENT_DE, 0,
	  "Er rief „Halt.“|„Nein.“|Dann »Gut.«|Ende." },
	{ "#1) Be kind. #2) Think.", SENT_EN, 0, "#1) Be kind.|#2) Think." },
	{ "He said “Stop.” Then “Go.”", SENT_EN, 0,
	  "He said “Stop.”|Then “Go.”" },
	/* inverted marks open, a lower-case letter after them goes on */
	{ "¡Hola! ¿Qué tal? Bien.", SENT_ES, 0, "¡Hola!|¿Qué tal?|Bien." },
	{ "¡Hola! ¿qué tal? Bien.", SENT_ES, 0, "¡Hola! ¿qué tal?|Bien." },
	{ "¿Vienes? —preguntó él.", SENT_ES, 0, "¿Vienes? —preguntó él." },
	{ "¿Vienes? —Sí.", SENT_ES, 0, "¿Vienes?|—Sí." },
	/* ellipses: three dots or U+2026, then a capital */
	{ "Pues... No sé.", SENT_ES, 0, "Pues...|No sé." },
	{ "Pues… no sé.", SENT_ES, 0, "Pues… no sé." },
	{ "What?! Really.", SENT_EN, 0, "What?!|Really." },
	/* French's space before the mark */
	{ "Vraiment ? Oui !", SENT_FR, 0, "Vraiment ?|Oui !" },
	/* unbalanced quotes change nothing */
	{ "Él dijo \"hola. Adiós.", SENT_ES, 0, "Él dijo \"hola.|Adiós." },
	/* clauses of 7 words: cut after ';' and after ':' before a capital,
	 * not after ':' before a small letter; 7 are not more than 7 */
	{ "Uno dos; tres cuatro: Cinco seis: siete.", SENT_ES, 6,
	  "Uno dos;|tres cuatro:|Cinco seis: siete." },
	{ "Uno dos; tres cuatro: Cinco seis: siete.", SENT_ES, 7,
	  "Uno dos; tres cuatro: Cinco seis: siete." },
	/* each sentence counted on its own: the first (3 words) stays */
	{ "Ab cd; ef. Gh ij; kl mn op.", SENT_ES, 3,
	  "Ab cd; ef.|Gh ij;|kl mn op." },
	/* openers before the capital; a ';' at the very end cuts nothing */
	{ "Y dijo: «Ven acá»; y vino;", SENT_ES, 2,
	  "Y dijo:|«Ven acá»;|y vino;" },
};

START_TEST(by_hand)
{
	cuts(cases[_i].text, cases[_i].lang, cases[_i].clause_words,
	     cases[_i].want);
}
END_TEST

START_TEST(empty_and_blank)
{
	struct sent_span *sp = NULL;
	size_t cap = 0;

	ck_assert_int_eq(sentsplit("", 0, SENT_EN, 0, &sp, &cap), 0);
	ck_assert_int_eq(sentsplit("  \t ", 4, SENT_EN, 0, &sp, &cap), 0);
	free(sp);
}
END_TEST

START_TEST(long_lines_linear)
{
	/* 1,000,000 bytes without a stop, then as many one-word sentences:
	 * a quadratic scan would not finish within the test's time */
	size_t n = 1000000, i;
	char *s = malloc(n);
	struct sent_span *sp = NULL;
	size_t cap = 0;

	ck_assert_ptr_nonnull(s);
	for (i = 0; i < n; i++)
		s[i] = i % 5 == 4 ? ' ' : 'a';
	ck_assert_int_eq(sentsplit(s, n, SENT_ES, 0, &sp, &cap), 1);
	ck_assert_uint_eq(sp[0].start, 0);
	ck_assert_uint_eq(sp[0].end, n - 1);
	for (i = 0; i < n; i++)          /* "Abc. Abc. ..." */
		s[i] = "Abc. "[i % 5];
	ck_assert_int_eq(sentsplit(s, n, SENT_ES, 0, &sp, &cap), n / 5);
	ck_assert_uint_eq(sp[n / 5 - 1].end, n - 1);
	memset(s, '.', n);               /* one word of dots */
	ck_assert_int_eq(sentsplit(s, n, SENT_ES, 0, &sp, &cap), 1);
	for (i = 0; i < n; i++)          /* "abc; abc; ...": one sentence */
		s[i] = "abc; "[i % 5];
	ck_assert_int_eq(sentsplit(s, n, SENT_ES, 0, &sp, &cap), 1);
	ck_assert_int_eq(sentsplit(s, n, SENT_ES, 40, &sp, &cap), n / 5);
	free(sp);
	free(s);
}
END_TEST

START_TEST(languages)
{
	ck_assert_int_eq(sentsplit_lang("es"), SENT_ES);
	ck_assert_int_eq(sentsplit_lang("none"), SENT_NONE);
	ck_assert_int_eq(sentsplit_lang("xx"), -1);
	ck_assert_int_eq(sentsplit_prefix(SENT_ES, "Sr", 2), 1);
	ck_assert_int_eq(sentsplit_prefix(SENT_ES, "sr", 2), 1);
	ck_assert_int_eq(sentsplit_prefix(SENT_ES, "SR", 2), 0);
	ck_assert_int_eq(sentsplit_prefix(SENT_EN, "No", 2), 2);
	ck_assert_int_eq(sentsplit_prefix(SENT_NONE, "Sr", 2), 1);
	ck_assert_int_eq(sentsplit_prefix(SENT_NONE, "es", 2), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sentsplit");
	TCase *tc = tcase_create("sentsplit");

	tcase_add_loop_test(tc, by_hand, 0, sizeof cases / sizeof cases[0]);
	tcase_add_test(tc, empty_and_blank);
	tcase_add_test(tc, long_lines_linear);
	tcase_add_test(tc, languages);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
