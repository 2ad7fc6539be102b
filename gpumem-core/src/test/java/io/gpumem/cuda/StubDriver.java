package io.gpumem.cuda;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.sun.jna.Library;
import com.sun.jna.Native;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * The stub driver library ({@code src/test/stub-driver/cuda-stub.c}) that the JVM of the tests tagged
 * {@value #TAG} loads as {@code libcuda.so.1}, under JCuda's real natives and JNA: the calls it recorded, as the C
 * ABI delivered their arguments, the refusals it is told to answer, and what it still holds.
 */
final class StubDriver {

	/** The tag of the tests that run on the stub, in the JVM Maven's {@code stub-driver} execution starts. */
	static final String TAG = "stub-driver";

	/** The folder the build wrote the stub into, set by that execution. */
	static final String DIRECTORY_PROPERTY = "gpumem.stub-driver";

	/** {@code required}, as CI sets it, makes a machine that cannot build or load the stub fail the tests. */
	private static final String REQUIRED_VARIABLE = "GPUMEM_STUB_DRIVER";

	private static final Object LOADED = load();

	private final Calls calls;

	private StubDriver(Calls calls) {
		this.calls = calls;
	}

	/**
	 * The stub this JVM runs on; where it runs on none, the test is skipped with the reason, or fails with it where
	 * {@code GPUMEM_STUB_DRIVER=required}.
	 */
	static StubDriver loaded() {
		if (LOADED instanceof StubDriver stub) {
			return stub;
		}
		if ("required".equals(System.getenv(REQUIRED_VARIABLE))) {
			return fail(REQUIRED_VARIABLE + "=required, but " + LOADED);
		}
		return abort(String.valueOf(LOADED));
	}

	/** The folder holding the stub's builds, {@code libcuda.so.1} and {@code no-virtual-memory/libcuda.so.1}. */
	static Path directory() {
		return Path.of(System.getProperty(DIRECTORY_PROPERTY));
	}

	/** The stub, or why this JVM does not run on it. */
	private static Object load() {
		String directory = System.getProperty(DIRECTORY_PROPERTY);
		if (directory == null) {
			return "this JVM was not started on the stub driver (Maven's stub-driver execution of gpumem-core starts one)";
		}
		Path unavailable = Path.of(directory, "unavailable.txt");
		if (Files.exists(unavailable)) {
			try {
				return "the stub driver could not be built here: " + Files.readString(unavailable).strip();
			}
			catch (IOException ex) {
				return "the stub driver could not be built here: " + ex;
			}
		}
		CudaProbeResult probe = CudaProbe.probe(0);
		if (!probe.usable()) {
			return "JCuda cannot use the stub driver: " + probe.reason();
		}
		try {
			Calls calls = Native.load("libcuda.so.1", Calls.class);
			calls.gpumemStubClearRecords();
			return new StubDriver(calls);
		}
		catch (LinkageError ex) {
			return "the driver library JCuda loaded is not the stub: " + ex;
		}
	}

	/** Every call recorded since the last {@link #clear()}, in the order the stub received them. */
	Recorded calls() {
		byte[] records;
		long length;
		do {
			records = new byte[Math.toIntExact(this.calls.gpumemStubRecords(null, 0) + 65536)];
			length = this.calls.gpumemStubRecords(records, records.length);
		}
		while (length >= records.length);
		String text = new String(records, 0, (int) length, StandardCharsets.US_ASCII);
		return new Recorded(text.lines().map(Call::parse).toList());
	}

	/** The calls recorded after the first {@code mark} of {@link #calls()}: what the code since then made. */
	Recorded callsSince(int mark) {
		List<Call> calls = calls().all();
		return new Recorded(calls.subList(mark, calls.size()));
	}

	/** Forgets the calls recorded so far. */
	void clear() {
		this.calls.gpumemStubClearRecords();
	}

	/** Makes every later call to {@code name} answer {@code code} until {@link #accept(String)} or {@link #reset()}. */
	void refuse(String name, int code) {
		this.calls.gpumemStubRefuse(name, code);
	}

	/** Takes back the refusal of {@code name}. */
	void accept(String name) {
		this.calls.gpumemStubRefuse(name, 0);
	}

	/** The CUDA version {@code cuDriverGetVersion} answers, as 1000 × major + 10 × minor, until {@link #reset()}. */
	void driverVersion(int version) {
		this.calls.gpumemStubSetDriverVersion(version);
	}

	/** The value {@code cuDeviceGetAttribute} answers for {@code attribute}, until {@link #reset()}. */
	void attribute(int attribute, int value) {
		this.calls.gpumemStubSetAttribute(attribute, value);
	}

	/** Takes back every refusal, driver version and attribute set. */
	void reset() {
		this.calls.gpumemStubReset();
	}

	/**
	 * What the stub still holds: allocations of each kind ({@code device}, {@code managed}, {@code pinned},
	 * {@code pooled}), reserved ranges, physical memory, mappings, streams, events, modules, pools and retained
	 * primary contexts, each counted.
	 */
	Map<String, Integer> holdings() {
		byte[] text = new byte[512];
		int length = (int) this.calls.gpumemStubHoldings(text, text.length);
		Map<String, Integer> holdings = new LinkedHashMap<>();
		for (String pair : new String(text, 0, length, StandardCharsets.US_ASCII).split(" ")) {
			int equals = pair.indexOf('=');
			holdings.put(pair.substring(0, equals), Integer.parseInt(pair.substring(equals + 1)));
		}
		return holdings;
	}

	/** Calls as the stub recorded them, in order. */
	record Recorded(List<Call> all) {

		/** How many there are: a mark for {@link StubDriver#callsSince(int)}. */
		int size() {
			return this.all.size();
		}

		/** The calls to the entry point {@code name} (its name in cuda.h's API, without {@code _v2}). */
		List<Call> named(String name) {
			return this.all.stream().filter((call) -> call.name().equals(name)).toList();
		}

		/** The one call to {@code name}. */
		Call only(String name) {
			List<Call> named = named(name);
			assertThat(named).as("calls to %s among %s", name, this).hasSize(1);
			return named.get(0);
		}

		/** The names of the calls, in order. */
		List<String> names() {
			return this.all.stream().map(Call::name).toList();
		}

		@Override
		public String toString() {
			return this.all.stream().map(Call::toString).collect(Collectors.joining("\n", "\n", ""));
		}

	}

	/** One call as the stub received it: its exported symbol, its result and its arguments by name. */
	record Call(String symbol, Map<String, String> arguments) {

		static Call parse(String line) {
			String[] words = line.split(" ");
			Map<String, String> arguments = new LinkedHashMap<>();
			Stream.of(words).skip(1).forEach((word) -> {
				int equals = word.indexOf('=');
				arguments.put(word.substring(0, equals), word.substring(equals + 1));
			});
			return new Call(words[0], arguments);
		}

		/** The entry point's name in cuda.h's API: the symbol without a version suffix such as {@code _v2}. */
		String name() {
			return this.symbol.replaceFirst("_v\\d+$", "");
		}

		/** The {@code CUresult} the stub answered. */
		int result() {
			return (int) number("result");
		}

		/** The argument {@code key} as recorded. */
		String text(String key) {
			String value = this.arguments.get(key);
			assertThat(value).as("%s of %s", key, this).isNotNull();
			return value;
		}

		/** The argument {@code key} as a number: decimal, or hexadecimal after {@code 0x}; a null pointer is 0. */
		long number(String key) {
			String value = text(key);
			if (value.equals("(nil)")) {
				return 0;
			}
			return value.startsWith("0x") ? Long.parseUnsignedLong(value.substring(2), 16) : Long.parseLong(value);
		}

		@Override
		public String toString() {
			StringBuilder line = new StringBuilder(this.symbol);
			this.arguments.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
			return line.toString();
		}

	}

	/** The stub's own entry points. */
	private interface Calls extends Library {

		long gpumemStubRecords(byte[] buffer, long capacity);

		void gpumemStubClearRecords();

		void gpumemStubRefuse(String call, int code);

		void gpumemStubReset();

		void gpumemStubSetDriverVersion(int version);

		void gpumemStubSetAttribute(int attribute, int value);

		long gpumemStubHoldings(byte[] buffer, long capacity);

	}

}
