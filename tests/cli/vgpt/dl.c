/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_image.sh: dlopen and dlclose two libraries in turn; the
 * dynamic linker maps each at the same address.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	long s = 0;

	if (argc < 3)
		return 2;
	for (int r = 0; r < 4; r++) {
		void *h = dlopen(argv[1 + (r & 1)], RTLD_NOW);
		int (*fn)(int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		fn = (int (*)(int))dlsym(h, "fn");
		s += fn(100 + r);
		dlclose(h);
	}
	printf("%ld\n", s);
	return 0;
}
