/*
 * Checks, on a real CUDA driver, the virtual-memory rules the fake driver (FakeAddressRange) keeps, and whether
 * cuMemCreate accepts the allocation properties JCuda 12.6.0 hands it (JCuda's JNI reads the properties'
 * allocFlags from the wrong object: usage arrives as 1, the low half of the allocation type, and the reserved
 * bytes are left as they were on the stack). Prints one line per rule: the rule, the driver's answer, PASS or FAIL.
 *
 * Build (any machine with cuda.h; the driver is loaded at run time, nothing is linked):
 *   gcc -O2 -I<cuda>/include scripts/vmm-driver-rules.c -ldl -o vmm-driver-rules
 * Run on the GPU machine: ./vmm-driver-rules      (exit code 0 when every rule holds, 1 otherwise); after the
 * rules it prints the time each virtual-memory call and cuMemAlloc take (docs/gpu-verification.md).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME(f) NAME2(f)
#define NAME2(f) #f
#define BIND(f) static __typeof__(f) *p_##f;
#define LOAD(f) p_##f = (__typeof__(f) *) dlsym(lib, NAME(f)); if (!p_##f) { printf("missing %s\n", NAME(f)); return 2; }
#define CALLS(X) X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuMemGetInfo) \
	X(cuMemGetAllocationGranularity) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemCreate) X(cuMemRelease) \
	X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemFree) \
	X(cuMemAlloc) X(cuCtxSynchronize) X(cuGetErrorName) X(cuDeviceGetAttribute)
CALLS(BIND)

static int failures;
static CUdevice device;

static const char *name(CUresult result) {
	const char *text = "?";
	p_cuGetErrorName(result, &text);
	return text;
}

static void rule(const char *what, int holds, CUresult answer) {
	printf("%-4s %-92s %s\n", holds ? "PASS" : "FAIL", what, name(answer));
	failures += !holds;
}

static CUmemAllocationProp physical(void) {
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = device;
	return prop;
}

static CUmemAccessDesc readWrite(void) {
	CUmemAccessDesc access;
	memset(&access, 0, sizeof(access));
	access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	access.location.id = device;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	return access;
}

static double micros(struct timespec a, struct timespec b) {
	return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
}

/** Wall and thread CPU time spent in calls, summed over rounds. */
struct timer {
	double wall, cpu;
	struct timespec wallStart, cpuStart;
};

static void start(struct timer *t) {
	clock_gettime(CLOCK_MONOTONIC, &t->wallStart);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t->cpuStart);
}

static void stop(struct timer *t) {
	struct timespec wall, cpu;
	clock_gettime(CLOCK_MONOTONIC, &wall);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	t->wall += micros(t->wallStart, wall);
	t->cpu += micros(t->cpuStart, cpu);
}

static void report(const char *what, const struct timer *t, int rounds) {
	printf("time %-56s %8.1f us wall, %8.1f us on the thread's CPU\n", what, t->wall / rounds, t->cpu / rounds);
}

int main(void) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) { printf("no libcuda.so.1: %s\n", dlerror()); return 2; }
	CALLS(LOAD)
	CUcontext context;
	if (p_cuInit(0) || p_cuDeviceGet(&device, 0) || p_cuDevicePrimaryCtxRetain(&context, device)
			|| p_cuCtxSetCurrent(context)) { printf("no CUDA device\n"); return 2; }
	int supported = 0;
	p_cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device);
	CUmemAllocationProp prop = physical();
	CUmemAccessDesc access = readWrite();
	size_t granule = 0;
	p_cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	printf("virtual memory supported: %d, granularity %zu\n", supported, granule);
	size_t before, after, total;
	CUresult r;

	/* What JCuda 12.6.0 passes: usage 1 (its JNI reads the allocation type's low half), reserved bytes as found. */
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp jcuda = physical();
	jcuda.allocFlags.usage = 1;
	r = p_cuMemCreate(&h, granule, &jcuda, 0);
	printf("info %-92s %s\n", "cuMemCreate with allocFlags.usage 1 (as JCuda 12.6.0 passes it)", name(r));
	if (r == CUDA_SUCCESS) p_cuMemRelease(h);
	CUmemAllocationProp dirty = physical();
	memset(dirty.allocFlags.reserved, 0xAB, sizeof(dirty.allocFlags.reserved));
	r = p_cuMemCreate(&h, granule, &dirty, 0);
	printf("info %-92s %s\n", "cuMemCreate with non-zero allocFlags.reserved bytes", name(r));
	if (r == CUDA_SUCCESS) p_cuMemRelease(h);

	/* Whole granules. */
	r = p_cuMemCreate(&h, granule / 2, &prop, 0);
	rule("cuMemCreate of half a granule is refused", r != CUDA_SUCCESS, r);
	if (r == CUDA_SUCCESS) p_cuMemRelease(h);
	CUdeviceptr bad;
	r = p_cuMemAddressReserve(&bad, granule + 4096, 0, 0, 0);
	rule("cuMemAddressReserve of a size that is not whole granules is refused", r != CUDA_SUCCESS, r);
	if (r == CUDA_SUCCESS) p_cuMemAddressFree(bad, granule + 4096);

	/* A reserved range holds no memory; physical memory does. */
	size_t span = (size_t) 1 << 30;
	CUdeviceptr base;
	p_cuMemGetInfo(&before, &total);
	r = p_cuMemAddressReserve(&base, span, 0, 0, 0);
	p_cuMemGetInfo(&after, &total);
	rule("reserving 1 GiB of addresses takes no device memory", r == CUDA_SUCCESS && before - after < granule, r);
	CUmemGenericAllocationHandle a, b;
	p_cuMemGetInfo(&before, &total);
	r = p_cuMemCreate(&a, granule, &prop, 0);
	p_cuMemCreate(&b, granule, &prop, 0);
	p_cuMemGetInfo(&after, &total);
	rule("two granules of physical memory take two granules of device memory",
			r == CUDA_SUCCESS && before - after >= 2 * granule && before - after < 3 * granule, r);

	/* Offsets are whole granules; access is set before use. */
	r = p_cuMemMap(base + 4096, granule, 0, a, 0);
	rule("cuMemMap at an offset that is not a whole granule is refused", r != CUDA_SUCCESS, r);
	r = p_cuMemMap(base, granule, 0, a, 0);
	CUresult r2 = p_cuMemMap(base + granule, granule, 0, b, 0);
	rule("two granules map side by side in one range", r == CUDA_SUCCESS && r2 == CUDA_SUCCESS, r2);
	r = p_cuMemMap(base, granule, 0, b, 0);
	rule("mapping over a mapped granule is refused", r != CUDA_SUCCESS, r);
	char *host = malloc(2 * granule);
	memset(host, 7, 2 * granule);
	r = p_cuMemSetAccess(base, 2 * granule, &access, 1);
	rule("one cuMemSetAccess covers two mappings side by side", r == CUDA_SUCCESS, r);
	r = p_cuMemcpyHtoD(base + granule - 8, host, 16);
	rule("a copy across the boundary of two mappings succeeds", r == CUDA_SUCCESS, r);

	/* Unmapping: whole mappings only; a range is freed only when nothing is mapped. */
	r = p_cuMemUnmap(base, granule / 2);
	rule("unmapping half a mapping is refused", r != CUDA_SUCCESS, r);
	r = p_cuMemUnmap(base, 2 * granule);
	printf("info %-92s %s\n", "one cuMemUnmap over two mappings side by side", name(r));
	if (r == CUDA_SUCCESS) {
		p_cuMemMap(base, granule, 0, a, 0);
		p_cuMemMap(base + granule, granule, 0, b, 0);
		p_cuMemSetAccess(base, 2 * granule, &access, 1);
	}
	r = p_cuMemFree(base);
	rule("cuMemFree of a reserved range is refused", r != CUDA_SUCCESS, r);

	/* A handle released while mapped stays alive until unmapped; its memory follows it. */
	p_cuMemGetInfo(&before, &total);
	p_cuMemRelease(a);
	r = p_cuMemsetD8(base, 42, granule);
	p_cuCtxSynchronize();
	unsigned char seen = 0;
	p_cuMemcpyDtoH(&seen, base + 100, 1);
	p_cuMemGetInfo(&after, &total);
	rule("a handle released while mapped stays usable and keeps its memory", r == CUDA_SUCCESS && seen == 42
			&& after + granule / 2 > before, r);
	p_cuMemGetInfo(&before, &total);
	r = p_cuMemUnmap(base, granule);
	p_cuMemGetInfo(&after, &total);
	rule("unmapping the released handle's granule gives its memory back", r == CUDA_SUCCESS && after - before >= granule, r);
	p_cuMemcpyDtoH(&seen, base + granule + 4, 1);
	rule("the neighbouring mapping keeps its bytes after an interior unmap", seen == 7, r);
	r = p_cuMemAddressFree(base, span);
	printf("info %-92s %s\n", "cuMemAddressFree while a granule is still mapped", name(r));
	if (r != CUDA_SUCCESS) {
		p_cuMemUnmap(base + granule, granule);
		r = p_cuMemAddressFree(base, span);
	}
	p_cuMemRelease(b);

	/*
	 * The cost of growing by one granule against cuMemAlloc, call by call, in wall time and in the calling thread's
	 * CPU time (whether the driver works on the thread or waits): the times the fake driver spends.
	 */
	CUdeviceptr range;
	p_cuMemAddressReserve(&range, span, 0, 0, 0);
	enum { ROUNDS = 200 };
	static CUmemGenericAllocationHandle kept[ROUNDS];
	struct timer create = {0}, map = {0}, setAccess = {0}, release = {0}, unmap = {0}, remap = {0};
	for (int i = 0; i < ROUNDS; i++) {
		CUdeviceptr at = range + (size_t) i * granule;
		start(&create); p_cuMemCreate(&h, granule, &prop, 0); stop(&create);
		start(&map); p_cuMemMap(at, granule, 0, h, 0); stop(&map);
		start(&setAccess); p_cuMemSetAccess(at, granule, &access, 1); stop(&setAccess);
		start(&release); p_cuMemRelease(h); stop(&release);
	}
	for (int i = 0; i < ROUNDS; i++) {
		start(&unmap); p_cuMemUnmap(range + (size_t) i * granule, granule); stop(&unmap);
	}
	/* A granule moved: its handle unmapped and mapped again elsewhere, neither released nor created. */
	for (int i = 0; i < ROUNDS; i++) {
		p_cuMemCreate(&kept[i], granule, &prop, 0);
		p_cuMemMap(range + (size_t) i * granule, granule, 0, kept[i], 0);
		p_cuMemSetAccess(range + (size_t) i * granule, granule, &access, 1);
	}
	for (int i = 0; i < ROUNDS; i++) {
		CUdeviceptr to = range + (size_t) (ROUNDS + i) * granule;
		start(&remap);
		p_cuMemUnmap(range + (size_t) i * granule, granule);
		p_cuMemMap(to, granule, 0, kept[i], 0);
		p_cuMemSetAccess(to, granule, &access, 1);
		stop(&remap);
	}
	for (int i = 0; i < ROUNDS; i++) {
		p_cuMemUnmap(range + (size_t) (ROUNDS + i) * granule, granule);
		p_cuMemRelease(kept[i]);
	}
	p_cuMemAddressFree(range, span);
	struct timer alloc[3] = {{0}}, freeing[3] = {{0}};
	for (int k = 0; k < 3; k++) {
		size_t bytes = granule << (2 * k);
		for (int i = 0; i < ROUNDS; i++) {
			CUdeviceptr plain;
			start(&alloc[k]); p_cuMemAlloc(&plain, bytes); stop(&alloc[k]);
			start(&freeing[k]); p_cuMemFree(plain); stop(&freeing[k]);
		}
	}
	printf("time per granule: create+map+access %.1f us, unmap %.1f us; cuMemAlloc+cuMemFree %.1f us\n",
			(create.wall + map.wall + setAccess.wall + release.wall) / ROUNDS, unmap.wall / ROUNDS,
			(alloc[0].wall + freeing[0].wall) / ROUNDS);
	report("cuMemCreate of a granule", &create, ROUNDS);
	report("cuMemMap of a granule", &map, ROUNDS);
	report("cuMemSetAccess of a granule", &setAccess, ROUNDS);
	report("cuMemRelease of a mapped granule", &release, ROUNDS);
	report("cuMemUnmap of a released granule (frees it)", &unmap, ROUNDS);
	report("a granule moved: cuMemUnmap, cuMemMap, cuMemSetAccess", &remap, ROUNDS);
	for (int k = 0; k < 3; k++) {
		char what[64];
		snprintf(what, sizeof(what), "cuMemAlloc of %zu MiB", (granule << (2 * k)) >> 20);
		report(what, &alloc[k], ROUNDS);
		snprintf(what, sizeof(what), "cuMemFree of %zu MiB", (granule << (2 * k)) >> 20);
		report(what, &freeing[k], ROUNDS);
	}

	/* Last, since it may leave the context unusable: a copy into a mapping whose access was never set. */
	p_cuMemAddressReserve(&base, granule, 0, 0, 0);
	p_cuMemCreate(&a, granule, &prop, 0);
	p_cuMemMap(base, granule, 0, a, 0);
	r = p_cuMemcpyHtoD(base, host, 16);
	CUresult sync = p_cuCtxSynchronize();
	rule("a copy into a mapping without access set fails", r != CUDA_SUCCESS || sync != CUDA_SUCCESS,
			r != CUDA_SUCCESS ? r : sync);
	printf("%d rule(s) failed\n", failures);
	return failures ? 1 : 0;
}
