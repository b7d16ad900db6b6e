/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf's names of record types and features, and perf's TSC <-> perf time
 * conversion.
 */
#include <hwt/perfdata.h>

const char *hwt_pd_record_name(uint32_t type)
{
	/* as `perf report -D` prints them */
	static const char *const kernel[] = {
		[PERF_RECORD_MMAP] = "PERF_RECORD_MMAP",
		[PERF_RECORD_LOST] = "PERF_RECORD_LOST",
		[PERF_RECORD_COMM] = "PERF_RECORD_COMM",
		[PERF_RECORD_EXIT] = "PERF_RECORD_EXIT",
		[PERF_RECORD_THROTTLE] = "PERF_RECORD_THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "PERF_RECORD_UNTHROTTLE",
		[PERF_RECORD_FORK] = "PERF_RECORD_FORK",
		[PERF_RECORD_READ] = "PERF_RECORD_READ",
		[PERF_RECORD_SAMPLE] = "PERF_RECORD_SAMPLE",
		[PERF_RECORD_MMAP2] = "PERF_RECORD_MMAP2",
		[PERF_RECORD_AUX] = "PERF_RECORD_AUX",
		[PERF_RECORD_ITRACE_START] = "PERF_RECORD_ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "PERF_RECORD_LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "PERF_RECORD_SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "PERF_RECORD_SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "PERF_RECORD_NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "PERF_RECORD_KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "PERF_RECORD_BPF_EVENT",
		[PERF_RECORD_CGROUP] = "PERF_RECORD_CGROUP",
		[PERF_RECORD_TEXT_POKE] = "PERF_RECORD_TEXT_POKE",
		[21] = "PERF_RECORD_AUX_OUTPUT_HW_ID",
	};
	static const char *const user[] = {
		[HWT_PD_HEADER_ATTR - 64] = "PERF_RECORD_ATTR",
		[HWT_PD_HEADER_EVENT_TYPE - 64] = "PERF_RECORD_EVENT_TYPE",
		[HWT_PD_HEADER_TRACING_DATA - 64] = "PERF_RECORD_TRACING_DATA",
		[HWT_PD_HEADER_BUILD_ID - 64] = "PERF_RECORD_BUILD_ID",
		[HWT_PD_FINISHED_ROUND - 64] = "PERF_RECORD_FINISHED_ROUND",
		[HWT_PD_ID_INDEX - 64] = "PERF_RECORD_ID_INDEX",
		[HWT_PD_AUXTRACE_INFO - 64] = "PERF_RECORD_AUXTRACE_INFO",
		[HWT_PD_AUXTRACE - 64] = "PERF_RECORD_AUXTRACE",
		[HWT_PD_AUXTRACE_ERROR - 64] = "PERF_RECORD_AUXTRACE_ERROR",
		[HWT_PD_THREAD_MAP - 64] = "PERF_RECORD_THREAD_MAP",
		[HWT_PD_CPU_MAP - 64] = "PERF_RECORD_CPU_MAP",
		[HWT_PD_STAT_CONFIG - 64] = "PERF_RECORD_STAT_CONFIG",
		[HWT_PD_STAT - 64] = "PERF_RECORD_STAT",
		[HWT_PD_STAT_ROUND - 64] = "PERF_RECORD_STAT_ROUND",
		[HWT_PD_EVENT_UPDATE - 64] = "PERF_RECORD_EVENT_UPDATE",
		[HWT_PD_TIME_CONV - 64] = "PERF_RECORD_TIME_CONV",
		[HWT_PD_HEADER_FEATURE - 64] = "PERF_RECORD_FEATURE",
		[HWT_PD_COMPRESSED - 64] = "PERF_RECORD_COMPRESSED",
		[HWT_PD_FINISHED_INIT - 64] = "PERF_RECORD_FINISHED_INIT",
	};

	if (type < sizeof(kernel) / sizeof(kernel[0]))
		return kernel[type];
	if (type >= 64 && type - 64 < sizeof(user) / sizeof(user[0]))
		return user[type - 64];
	return NULL;
}

const char *hwt_pd_feature_name(uint32_t feat)
{
	/* as `perf report --header` names missing features */
	static const char *const names[HWT_PD_FEAT_LAST] = {
		[HWT_PD_FEAT_TRACING_DATA] = "TRACING_DATA",
		[HWT_PD_FEAT_BUILD_ID] = "BUILD_ID",
		[HWT_PD_FEAT_HOSTNAME] = "HOSTNAME",
		[HWT_PD_FEAT_OSRELEASE] = "OSRELEASE",
		[HWT_PD_FEAT_VERSION] = "VERSION",
		[HWT_PD_FEAT_ARCH] = "ARCH",
		[HWT_PD_FEAT_NRCPUS] = "NRCPUS",
		[HWT_PD_FEAT_CPUDESC] = "CPUDESC",
		[HWT_PD_FEAT_CPUID] = "CPUID",
		[HWT_PD_FEAT_TOTAL_MEM] = "TOTAL_MEM",
		[HWT_PD_FEAT_CMDLINE] = "CMDLINE",
		[HWT_PD_FEAT_EVENT_DESC] = "EVENT_DESC",
		[HWT_PD_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
		[HWT_PD_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
		[HWT_PD_FEAT_BRANCH_STACK] = "BRANCH_STACK",
		[HWT_PD_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
		[HWT_PD_FEAT_GROUP_DESC] = "GROUP_DESC",
		[HWT_PD_FEAT_AUXTRACE] = "AUXTRACE",
		[HWT_PD_FEAT_STAT] = "STAT",
		[HWT_PD_FEAT_CACHE] = "CACHE",
		[HWT_PD_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
		[HWT_PD_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
		[HWT_PD_FEAT_CLOCKID] = "CLOCKID",
		[HWT_PD_FEAT_DIR_FORMAT] = "DIR_FORMAT",
		[HWT_PD_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
		[HWT_PD_FEAT_BPF_BTF] = "BPF_BTF",
		[HWT_PD_FEAT_COMPRESSED] = "COMPRESSED",
		[HWT_PD_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
		[HWT_PD_FEAT_CLOCK_DATA] = "CLOCK_DATA",
		[HWT_PD_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
		[HWT_PD_FEAT_PMU_CAPS] = "PMU_CAPS",
	};

	if (feat < HWT_PD_FEAT_LAST && names[feat])
		return names[feat];
	if (feat == HWT_PD_FEAT_HWT_EXIT)
		return "HWT_EXIT";
	return "unknown feature";
}

/*
 * The kernel's mmap page conversion: time = zero + cyc * mult >> shift,
 * split in quotient and remainder so the product does not overflow.
 */
uint64_t hwt_pd_tsc_to_perf_time(const struct hwt_pd_time_conv *tc,
				 uint64_t tsc)
{
	uint64_t shift, quot, rem;

	if (!tc)
		return 0;
	shift = tc->time_shift < 63 ? tc->time_shift : 63;
	if (tc->extended && tc->cap_user_time_short)
		tsc = tc->time_cycles + ((tsc - tc->time_cycles) & tc->time_mask);
	quot = tsc >> shift;
	rem = tsc & ((1ull << shift) - 1);
	return tc->time_zero + quot * tc->time_mult +
	       ((rem * tc->time_mult) >> shift);
}

uint64_t hwt_pd_perf_time_to_tsc(const struct hwt_pd_time_conv *tc,
				 uint64_t ns)
{
	uint64_t shift, t, quot, rem;

	if (!tc || !tc->time_mult)
		return 0;
	shift = tc->time_shift < 63 ? tc->time_shift : 63;
	t = ns - tc->time_zero;
	quot = t / tc->time_mult;
	rem = t % tc->time_mult;
	return (quot << shift) + (rem << shift) / tc->time_mult;
}

const char *hwt_pd_auxtrace_name(uint32_t type)
{
	switch (type) {
	case HWT_PD_AUXTRACE_INTEL_PT: return "intel_pt";
	case HWT_PD_AUXTRACE_INTEL_BTS: return "intel_bts";
	case HWT_PD_AUXTRACE_CS_ETM: return "cs_etm";
	case HWT_PD_AUXTRACE_ARM_SPE: return "arm_spe";
	case HWT_PD_AUXTRACE_S390_CPUMSF: return "s390_cpumsf";
	case HWT_PD_AUXTRACE_HISI_PTT: return "hisi_ptt";
	default: return NULL;
	}
}
