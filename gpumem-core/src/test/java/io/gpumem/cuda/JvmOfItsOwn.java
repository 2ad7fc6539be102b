package io.gpumem.cuda;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Runs a test's {@code main} in a JVM of its own, on this JVM's test class path: for what leaves a driver unusable
 * for the rest of its process, or needs another driver library or class path.
 */
record JvmOfItsOwn(List<String> options, Map<String, String> environment, Predicate<String> classPathEntries) {

	/** A JVM with this one's class path and environment. */
	static JvmOfItsOwn plain() {
		return new JvmOfItsOwn(List.of(), Map.of(), (entry) -> true);
	}

	/** The same with {@code variables} set in the environment it inherits. */
	JvmOfItsOwn withEnvironment(Map<String, String> variables) {
		return new JvmOfItsOwn(this.options, variables, this.classPathEntries);
	}

	/** The same with {@code jvmOptions}, and only those, before the main class. */
	JvmOfItsOwn withOptions(String... jvmOptions) {
		return new JvmOfItsOwn(List.of(jvmOptions), this.environment, this.classPathEntries);
	}

	/** The same with the class path entries {@code drop} matches left out. */
	JvmOfItsOwn without(Predicate<String> drop) {
		return new JvmOfItsOwn(this.options, this.environment, drop.negate());
	}

	/** Runs {@code main} with {@code arguments} to its end (at most five minutes) and answers what it printed. */
	Ended run(Class<?> main, String... arguments) throws IOException, InterruptedException {
		String classPath = Arrays
			.stream(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
				.split(File.pathSeparator))
			.filter(this.classPathEntries)
			.collect(Collectors.joining(File.pathSeparator));
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(this.options);
		command.addAll(List.of("-cp", classPath, main.getName()));
		command.addAll(List.of(arguments));
		Path log = Files.createTempFile(main.getSimpleName(), ".log");
		try {
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
			builder.environment().putAll(this.environment);
			Process process = builder.start();
			if (!process.waitFor(5, TimeUnit.MINUTES)) {
				process.destroyForcibly().waitFor();
				return new Ended(-1, Files.readString(log) + "\n(killed after five minutes)");
			}
			return new Ended(process.exitValue(), Files.readString(log));
		}
		finally {
			Files.deleteIfExists(log);
		}
	}

	/** How the JVM ended: its exit code and everything it printed. */
	record Ended(int exitCode, String output) {
	}

}
