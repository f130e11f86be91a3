/*
 * sentsplit_lists.c: the non-breaking prefixes of sentsplit.h, per
 * language: words that, followed by a dot, do not end a sentence.
 *
 * Sources.  The lists were written for attn from the kinds of entries in
 * Moses' nonbreaking_prefix.LANG files (mosesdecoder,
 * scripts/share/nonbreaking_prefixes: titles, abbreviations, months, and
 * entries marked #NUMERIC_ONLY# that hold only before a number) and in
 * CLDR's sentence-break suppressions (common/segments/LANG.xml); they are
 * a selection of the common ones, not copies of either.  Single letters
 * (initials) and abbreviations with inner dots ("e.g.", "EE.UU.") need no
 * entry: sentsplit.c keeps them whatever the language.
 *
 * Matching is exact, case included, as Moses matches ("Sr" and "sr" are
 * two entries).  An entry starting with '#' holds only when the next word
 * starts with a digit ("No. 5", "art. 3").  Abbreviations that are also
 * common words at the end of a sentence are left out: Spanish and
 * Portuguese "mar" (March; the sea, "en el mar. Y ..."), Portuguese "dez"
 * (December; ten).
 *
 * Without a language (SENT_NONE) only titles before a name hold: words
 * of the six lists that are written capitalised and stand before a name,
 * so that they rarely end a sentence in any of the languages ("Sr.
 * García", "Dr. Smith", "Mme. Curie").  Abbreviations that are common
 * words in another language ("es", "mar", "out", "set") are in no
 * language's list but their own.
 */
#include <string.h>
#include "sentsplit.h"

static const char *const en[] = {
	"Mr", "Mrs", "Ms", "Messrs", "Dr", "Drs", "Prof", "Sr", "Jr", "St",
	"Mt", "Rev", "Hon", "Gen", "Col", "Lt", "Capt", "Cmdr", "Sgt",
	"Gov", "Pres", "Rep", "Sen", "Supt", "Adm", "Maj", "Mme",
	"vs", "etc", "al", "cf", "approx", "dept", "Dept", "Inc", "Ltd",
	"Co", "Corp", "Bros", "Ave", "Blvd", "Rd", "Univ", "esp", "fig",
	"Fig", "figs", "vol", "Vol", "vols", "ed", "eds", "ch", "Ch",
	"Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept",
	"Oct", "Nov", "Dec", "#No", "#Nos", "#no", "#Art", "#art", "#pp",
	"#Nr", NULL,
};

static const char *const es[] = {
	"Sr", "Sra", "Srta", "Sres", "Sras", "sr", "sra", "srta", "Dr",
	"Dra", "Dres", "Lic", "Ing", "Arq", "Prof", "Profa", "Ud", "Uds",
	"Vd", "Vds", "Dña", "Excmo", "Excma", "Ilmo", "Ilma", "Mons",
	"Rvdo", "Gral", "Cap", "Cnel", "Tte", "Sto", "Sta", "Fr", "Hno",
	"Hna", "etc", "ej", "pág", "págs", "vol", "vols", "cap", "caps",
	"tel", "Tel", "aprox", "dcha", "izq", "Avda", "Av", "av", "Pza",
	"Cía", "cía", "Dpto", "dpto", "depto", "admón", "atte", "ib", "íd",
	"ibíd", "cf", "cfr", "vs", "ed", "fig", "Fig", "EE", "UU", "sig",
	"sigs", "ss", "ene", "feb", "abr", "jun", "jul", "ago",
	"sept", "oct", "nov", "dic", "#No", "#no", "#Núm", "#núm", "#art",
	"#Art", "#pp", NULL,
};

static const char *const de[] = {
	"Dr", "Prof", "Hr", "Hrn", "Fr", "Frl", "St", "Dipl", "Ing", "Mag",
	"bzw", "ca", "usw", "etc", "vgl", "Vgl", "ggf", "evtl", "inkl",
	"exkl", "zzgl", "bzgl", "sog", "geb", "gest", "verh", "Abb", "Abs",
	"Bd", "Bde", "Kap", "Jh", "Jhd", "Tel", "Mio", "Mrd", "Std", "Min",
	"Sek", "Fa", "Inh", "Str", "Pl", "Anm", "Hrsg", "hrsg", "bspw",
	"insb", "Jan", "Feb", "Mär", "Apr", "Jun", "Jul", "Aug", "Sep",
	"Sept", "Okt", "Nov", "Dez", "#Nr", "#Art", "#Abs", "#No", NULL,
};

static const char *const fr[] = {
	"MM", "Mme", "Mmes", "Mlle", "Mlles", "Dr", "Pr", "Me", "Mgr",
	"St", "Ste", "etc", "cf", "env", "av", "apr", "vol", "chap", "éd",
	"fig", "Fig", "tél", "Tél", "bd", "boul", "ex", "resp", "janv",
	"févr", "avr", "juil", "sept", "oct", "nov", "déc", "#No", "#no",
	"#art", "#Art", "#pp", NULL,
};

static const char *const pt[] = {
	"Sr", "Sra", "Srta", "Srs", "Sras", "Dr", "Dra", "Drs", "Dras",
	"Prof", "Profa", "Exmo", "Exma", "Ilmo", "Ilma", "Exa", "Av", "av",
	"etc", "ex", "pág", "págs", "vol", "cap", "tel", "Tel", "Cia",
	"Ltda", "aprox", "cf", "vs", "fig", "Fig", "jan", "fev", "abr",
	"mai", "jun", "jul", "ago", "set", "out", "nov",
	"#No", "#art", "#Art", "#pp", NULL,
};

static const char *const it[] = {
	"Sig", "Sigg", "Sigra", "Dott", "Dr", "Prof", "Ing", "Avv", "Arch",
	"Geom", "Rag", "On", "Egr", "Gent", "Spett", "Mons", "Sen", "Sant",
	"pag", "pagg", "ecc", "etc", "cap", "vol", "tel", "Tel", "es",
	"ca", "fig", "Fig", "cfr", "gen", "feb", "mar", "apr", "mag", "giu",
	"lug", "ago", "set", "ott", "nov", "dic", "#No", "#art", "#Art",
	"#pp", NULL,
};

static const char *const titles[] = {
	"Mr", "Mrs", "Ms", "Messrs", "Dr", "Dra", "Drs", "Dras", "Prof",
	"Profa", "Sr", "Sra", "Srta", "Sres", "Sras", "Srs", "Mme", "Mmes",
	"Mlle", "Mlles", "Hr", "Hrn", "Frl", "Sig", "Sigg", "Sigra", "Dott",
	"Avv", "Mgr", "Mons", NULL,
};

static const char *const *const lists[SENT_NLANG] = {
	[SENT_NONE] = titles, [SENT_EN] = en, [SENT_ES] = es, [SENT_DE] = de, [SENT_FR] = fr,
	[SENT_PT] = pt, [SENT_IT] = it,
};

int sentsplit_prefix(enum sent_lang lang, const char *word, size_t n)
{
	const char *const *p;

	if ((unsigned)lang >= SENT_NLANG)
		return 0;
	for (p = lists[lang]; *p; p++) {
		const char *e = **p == '#' ? *p + 1 : *p;

		if (strlen(e) == n && memcmp(e, word, n) == 0)
			return e == *p ? 1 : 2;
	}
	return 0;
}
