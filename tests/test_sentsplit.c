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

static void splits(const char *text, enum sent_lang lang, const char *want)
{
	cuts(text, lang, 0, want);
}

START_TEST(plain_stops)
{
	splits("Hola. Adiós.", SENT_ES, "Hola.|Adiós.");
	splits("  Uno.  Dos!\tTres? ", SENT_NONE, "Uno.|Dos!|Tres?");
	splits("No stop here", SENT_EN, "No stop here");
	/* lower case after the stop: one sentence */
	splits("Dijo algo. y siguió", SENT_ES, "Dijo algo. y siguió");
	/* a digit opens one */
	splits("Tenía hijos. 3 de ellos", SENT_ES, "Tenía hijos.|3 de ellos");
	/* accented capitals (two-byte UTF-8) */
	splits("Fin. Él vino. Ángel.", SENT_ES, "Fin.|Él vino.|Ángel.");
}
END_TEST

START_TEST(empty_and_blank)
{
	struct sent_span *sp = NULL;
	size_t cap = 0;

	ck_assert_int_eq(sentsplit("", 0, SENT_EN, 0, &sp, &cap), 0);
	ck_assert_int_eq(sentsplit("  \t ", 4, SENT_EN, 0, &sp, &cap), 0);
	free(sp);
	/* punctuation only: one sentence, nothing lost */
	splits("!!! ??? ... .", SENT_NONE, "!!! ??? ... .");
	splits(". A", SENT_NONE, ".|A");
}
END_TEST

START_TEST(prefixes)
{
	splits("El Sr. García llegó. Luego se fue.", SENT_ES,
	       "El Sr. García llegó.|Luego se fue.");
	/* without Spanish's list, "Sr." ends a sentence */
	splits("El Sr. García llegó.", SENT_NONE, "El Sr.|García llegó.");
	splits("Mr. Smith met Dr. Jones. They talked.", SENT_EN,
	       "Mr. Smith met Dr. Jones.|They talked.");
	splits("Frutas, p. ej. Manzanas. Y más.", SENT_ES,
	       "Frutas, p. ej. Manzanas.|Y más.");
	splits("Obst, z. B. Äpfel. Dann mehr.", SENT_DE,
	       "Obst, z. B. Äpfel.|Dann mehr.");
	splits("Libros, etc. Todo eso.", SENT_ES, "Libros, etc. Todo eso.");
	splits("M. Dupont et Mme. Durand. Ils partent.", SENT_FR,
	       "M. Dupont et Mme. Durand.|Ils partent.");
	splits("O Sr. Silva chegou. Depois saiu.", SENT_PT,
	       "O Sr. Silva chegou.|Depois saiu.");
	splits("Il Dott. Rossi arriva. Poi parte.", SENT_IT,
	       "Il Dott. Rossi arriva.|Poi parte.");
	/* initials, and abbreviations with inner dots */
	splits("J. R. R. Tolkien wrote. He died.", SENT_EN,
	       "J. R. R. Tolkien wrote.|He died.");
	splits("Fruit, e.g. Apples. More.", SENT_EN,
	       "Fruit, e.g. Apples.|More.");
	splits("Viven en EE.UU. Desde 1990.", SENT_ES,
	       "Viven en EE.UU. Desde 1990.");
}
END_TEST

START_TEST(numeric_only_and_ordinals)
{
	/* "No." holds before a number only */
	splits("See No. 5 here.", SENT_EN, "See No. 5 here.");
	splits("He said No. Then left.", SENT_EN, "He said No.|Then left.");
	/* German ordinals; other languages split there */
	splits("Er kam am 3. Oktober. Dann ging er.", SENT_DE,
	       "Er kam am 3. Oktober.|Dann ging er.");
	splits("They were 3. Then 4.", SENT_EN, "They were 3.|Then 4.");
}
END_TEST

START_TEST(numbers_urls_mail)
{
	splits("Pi es 3.14 más o menos. Sí.", SENT_ES,
	       "Pi es 3.14 más o menos.|Sí.");
	splits("Visit www.example.com today. Or not.", SENT_EN,
	       "Visit www.example.com today.|Or not.");
	/* a URL or address at the end keeps its dots; its last dot ends */
	splits("Visit www.example.com. Then rest.", SENT_EN,
	       "Visit www.example.com.|Then rest.");
	splits("Go to example.org. Then rest.", SENT_EN,
	       "Go to example.org.|Then rest.");
	splits("Write to ana.lopez@correo.es. Gracias.", SENT_ES,
	       "Write to ana.lopez@correo.es.|Gracias.");
	splits("See http://a.b.c/x.html. Then.", SENT_EN,
	       "See http://a.b.c/x.html.|Then.");
}
END_TEST

START_TEST(quotes_brackets_marks)
{
	splits("Dijo: \"Ven.\" Y fue.", SENT_ES, "Dijo: \"Ven.\"|Y fue.");
	splits("(Véase arriba.) Luego.", SENT_ES, "(Véase arriba.)|Luego.");
	splits("«Basta.» «Bien.»", SENT_ES, "«Basta.»|«Bien.»");
	/* German quotes close with what English opens with */
	splits("Er rief „Halt.“ „Nein.“ Dann »Gut.« Ende.", SENT_DE,
	       "Er rief „Halt.“|„Nein.“|Dann »Gut.«|Ende.");
	splits("#1) Be kind. #2) Think.", SENT_EN, "#1) Be kind.|#2) Think.");
	splits("He said “Stop.” Then “Go.”", SENT_EN,
	       "He said “Stop.”|Then “Go.”");
	/* inverted marks open, a lower-case letter after them goes on */
	splits("¡Hola! ¿Qué tal? Bien.", SENT_ES, "¡Hola!|¿Qué tal?|Bien.");
	splits("¡Hola! ¿qué tal? Bien.", SENT_ES, "¡Hola! ¿qué tal?|Bien.");
	splits("¿Vienes? —preguntó él.", SENT_ES, "¿Vienes? —preguntó él.");
	splits("¿Vienes? —Sí.", SENT_ES, "¿Vienes?|—Sí.");
	/* ellipses: three dots or U+2026, then a capital */
	splits("Pues... No sé.", SENT_ES, "Pues...|No sé.");
	splits("Pues… no sé.", SENT_ES, "Pues… no sé.");
	splits("What?! Really.", SENT_EN, "What?!|Really.");
	/* French's space before the mark */
	splits("Vraiment ? Oui !", SENT_FR, "Vraiment ?|Oui !");
	/* unbalanced quotes change nothing */
	splits("Él dijo \"hola. Adiós.", SENT_ES, "Él dijo \"hola.|Adiós.");
}
END_TEST

START_TEST(clauses_of_long_sentences)
{
	/* 7 words: cut after ';' and after ':' before a capital, not
	 * after ':' before a small letter; 7 words are not more than 7 */
	cuts("Uno dos; tres cuatro: Cinco seis: siete.", SENT_ES, 6,
	     "Uno dos;|tres cuatro:|Cinco seis: siete.");
	cuts("Uno dos; tres cuatro: Cinco seis: siete.", SENT_ES, 7,
	     "Uno dos; tres cuatro: Cinco seis: siete.");
	/* each sentence counted on its own: the first (3 words) stays */
	cuts("Ab cd; ef. Gh ij; kl mn op.", SENT_ES, 3,
	     "Ab cd; ef.|Gh ij;|kl mn op.");
	/* openers before the capital; a ';' at the very end cuts nothing */
	cuts("Y dijo: «Ven acá»; y vino;", SENT_ES, 2,
	     "Y dijo:|«Ven acá»;|y vino;");
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
	ck_assert_int_eq(sentsplit_prefix(SENT_NONE, "Sr", 2), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sentsplit");
	TCase *tc = tcase_create("sentsplit");

	tcase_add_test(tc, plain_stops);
	tcase_add_test(tc, empty_and_blank);
	tcase_add_test(tc, prefixes);
	tcase_add_test(tc, numeric_only_and_ordinals);
	tcase_add_test(tc, numbers_urls_mail);
	tcase_add_test(tc, quotes_brackets_marks);
	tcase_add_test(tc, clauses_of_long_sentences);
	tcase_add_test(tc, long_lines_linear);
	tcase_add_test(tc, languages);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
