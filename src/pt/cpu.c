/* SPDX-License-Identifier: BSD-2-Clause */
/* CPU identification and the Intel PT errata that go with it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <hwt/pt.h>

/*
 * One number of "f/m[/s]" in [0, @max]. C notation (strtol base 0) as
 * ptdump accepts it. Returns the character after the number or NULL.
 */
static const char *parse_field(const char *str, long max, long *value)
{
	char *end;

	errno = 0;
	*value = strtol(str, &end, 0);
	if (end == str || errno || *value < 0 || *value > max)
		return NULL;
	return end;
}

int hwt_pt_cpu_parse(struct hwt_pt_cpu *cpu, const char *str)
{
	long family, model, stepping = 0;
	const char *pos;

	if (!cpu || !str)
		return -HWT_ERR_INVALID;

	pos = parse_field(str, 0xffff, &family);
	if (!pos || *pos != '/')
		return -HWT_ERR_INVALID;
	pos = parse_field(pos + 1, 0xff, &model);
	if (!pos || (*pos && *pos != '/'))
		return -HWT_ERR_INVALID;
	if (*pos) {
		pos = parse_field(pos + 1, 0xff, &stepping);
		if (!pos || *pos)
			return -HWT_ERR_INVALID;
	}

	cpu->vendor = HWT_PT_VENDOR_INTEL;
	cpu->family = (uint16_t)family;
	cpu->model = (uint8_t)model;
	cpu->stepping = (uint8_t)stepping;
	return 0;
}

/* Errata shared by a group of family 6 models. */
#define SKL_CLIENT (HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_SKD007 | \
		    HWT_PT_ERRATUM_SKD022 | HWT_PT_ERRATUM_SKD010 | \
		    HWT_PT_ERRATUM_SKL014 | HWT_PT_ERRATUM_SKL168)
#define SKL_SERVER (HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_SKL014 | \
		    HWT_PT_ERRATUM_SKD022 | HWT_PT_ERRATUM_SKZ84)
#define SPR_SERVER (HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_SKD022 | \
		    HWT_PT_ERRATUM_SKZ84)
#define ICL_CLIENT (HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_SKL014 | \
		    HWT_PT_ERRATUM_SKD022)
#define ADL_CLIENT (HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_SKD022 | \
		    HWT_PT_ERRATUM_APL11)

struct model_errata {
	uint8_t model;
	uint32_t errata;
};

/*
 * Family 6, from the processors' specification updates (the same models
 * libipt knows).
 */
static const struct model_errata family6[] = {
	/* Broadwell */
	{ 0x3d, HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_BDM64 },
	{ 0x47, HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_BDM64 },
	{ 0x4f, HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_BDM64 },
	{ 0x56, HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_BDM64 },
	/* Skylake, Kaby Lake, Coffee Lake, Comet Lake clients */
	{ 0x4e, SKL_CLIENT }, { 0x5e, SKL_CLIENT }, { 0x8e, SKL_CLIENT },
	{ 0x9e, SKL_CLIENT }, { 0xa5, SKL_CLIENT }, { 0xa6, SKL_CLIENT },
	/* Skylake, Ice Lake servers */
	{ 0x55, SKL_SERVER }, { 0x6a, SKL_SERVER }, { 0x6c, SKL_SERVER },
	/* Sapphire Rapids and later servers */
	{ 0x8f, SPR_SERVER }, { 0xcf, SPR_SERVER }, { 0xad, SPR_SERVER },
	{ 0xae, SPR_SERVER },
	/* Cannon Lake to Rocket Lake clients */
	{ 0x66, ICL_CLIENT }, { 0x7d, ICL_CLIENT }, { 0x7e, ICL_CLIENT },
	{ 0x8c, ICL_CLIENT }, { 0x8d, ICL_CLIENT }, { 0xa7, ICL_CLIENT },
	{ 0xa8, ICL_CLIENT },
	/* Alder Lake and later hybrid clients */
	{ 0x97, ADL_CLIENT }, { 0x9a, ADL_CLIENT }, { 0xba, ADL_CLIENT },
	{ 0xb7, ADL_CLIENT }, { 0xbf, ADL_CLIENT }, { 0xc5, ADL_CLIENT },
	{ 0xc6, ADL_CLIENT }, { 0xb5, ADL_CLIENT }, { 0xaa, ADL_CLIENT },
	{ 0xac, ADL_CLIENT }, { 0xbd, ADL_CLIENT }, { 0xcc, ADL_CLIENT },
	/* Apollo Lake, Denverton */
	{ 0x5c, HWT_PT_ERRATUM_APL12 | HWT_PT_ERRATUM_APL11 },
	{ 0x5f, HWT_PT_ERRATUM_APL12 | HWT_PT_ERRATUM_APL11 },
	/* later Atom cores */
	{ 0x7a, HWT_PT_ERRATUM_APL11 }, { 0x86, HWT_PT_ERRATUM_APL11 },
	{ 0x96, HWT_PT_ERRATUM_APL11 }, { 0x9c, HWT_PT_ERRATUM_APL11 },
	{ 0xb6, HWT_PT_ERRATUM_APL11 }, { 0xaf, HWT_PT_ERRATUM_APL11 },
	{ 0xdd, HWT_PT_ERRATUM_APL11 },
};

int hwt_pt_cpu_errata(const struct hwt_pt_cpu *cpu, uint32_t *errata)
{
	size_t i;

	*errata = 0;
	if (cpu->vendor != HWT_PT_VENDOR_INTEL)
		return -HWT_ERR_NOT_SUPPORTED;

	if (cpu->family == 0x6) {
		for (i = 0; i < sizeof(family6) / sizeof(family6[0]); i++) {
			if (family6[i].model == cpu->model) {
				*errata = family6[i].errata;
				return 0;
			}
		}
	} else if (cpu->family == 0x13 && cpu->model == 0x01) {
		*errata = SPR_SERVER;
		return 0;
	}
	return -HWT_ERR_NOT_SUPPORTED;
}

#if defined(__x86_64__) || defined(__i386__)
int hwt_pt_cpu_host(struct hwt_pt_cpu *cpu)
{
	unsigned eax, ebx, ecx, edx, family, model;
	char vendor[12];

	memset(cpu, 0, sizeof(*cpu));
	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return -HWT_ERR_NOT_SUPPORTED;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	if (memcmp(vendor, "GenuineIntel", 12) || eax < 1)
		return -HWT_ERR_NOT_SUPPORTED;

	__cpuid(1, eax, ebx, ecx, edx);
	/* SDM, CPUID leaf 1: the displayed family and model. */
	family = (eax >> 8) & 0xf;
	model = (eax >> 4) & 0xf;
	if (family == 0x6 || family == 0xf)
		model |= ((eax >> 16) & 0xf) << 4;
	if (family == 0xf)
		family += (eax >> 20) & 0xff;

	cpu->vendor = HWT_PT_VENDOR_INTEL;
	cpu->family = (uint16_t)family;
	cpu->model = (uint8_t)model;
	cpu->stepping = (uint8_t)(eax & 0xf);
	return 0;
}
#else
int hwt_pt_cpu_host(struct hwt_pt_cpu *cpu)
{
	memset(cpu, 0, sizeof(*cpu));
	return -HWT_ERR_NOT_SUPPORTED;
}
#endif
