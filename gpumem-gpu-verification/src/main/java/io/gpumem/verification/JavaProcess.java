package io.gpumem.verification;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child process of the verification, its output going to a file: a JVM started from the bundle's runtime with one
 * of the bundle's class paths, or another program of the machine's, such as {@code python3}.
 */
final class JavaProcess {

	/** The exit code reported for a process that outlived its time and was killed. */
	static final int TIMED_OUT = -1;

	private final Process process;

	private final Path log;

	private JavaProcess(Process process, Path log) {
		this.process = process;
		this.log = log;
	}

	/**
	 * Starts {@code mainClass} with {@code arguments} on {@code classPath}, run from {@code directory}, its
	 * output appended to {@code log}.
	 */
	static JavaProcess start(Path directory, String classPath, List<String> jvmOptions, String mainClass,
			List<String> arguments, Path log) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmOptions);
		command.add("-cp");
		command.add(classPath);
		command.add(mainClass);
		command.addAll(arguments);
		return start(directory, command, log);
	}

	/** Starts {@code command}, run from {@code directory}, its output appended to {@code log}. */
	static JavaProcess start(Path directory, List<String> command, Path log) throws IOException {
		Process process = new ProcessBuilder(command).directory(directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.start();
		return new JavaProcess(process, log);
	}

	/** Runs {@code mainClass} to its end, or kills it after {@code timeoutSeconds}; answers its exit code. */
	static int run(Path directory, String classPath, String mainClass, List<String> arguments, Path log,
			long timeoutSeconds) throws IOException, InterruptedException {
		return start(directory, classPath, List.of(), mainClass, arguments, log).waitFor(timeoutSeconds);
	}

	/** Runs {@code command} to its end, or kills it after {@code timeoutSeconds}; answers its exit code. */
	static int run(Path directory, List<String> command, Path log, long timeoutSeconds)
			throws IOException, InterruptedException {
		return start(directory, command, log).waitFor(timeoutSeconds);
	}

	/** How a process ended, for a report: killed after {@code timeoutSeconds}, or its exit code. */
	static String ending(int exit, long timeoutSeconds) {
		return (exit == TIMED_OUT) ? "did not end within " + timeoutSeconds + " s" : "exited with " + exit;
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	Path log() {
		return this.log;
	}

	/** Waits for the end, killing the process after {@code seconds}; answers its exit code or {@link #TIMED_OUT}. */
	int waitFor(long seconds) throws InterruptedException {
		if (this.process.waitFor(seconds, TimeUnit.SECONDS)) {
			return this.process.exitValue();
		}
		this.process.descendants().forEach(ProcessHandle::destroyForcibly);
		this.process.destroyForcibly().waitFor();
		return TIMED_OUT;
	}

	/** Asks the process to stop (SIGTERM, so a Spring application shuts down gracefully) and waits for it. */
	int stop(long seconds) throws InterruptedException {
		this.process.destroy();
		return waitFor(seconds);
	}

}
