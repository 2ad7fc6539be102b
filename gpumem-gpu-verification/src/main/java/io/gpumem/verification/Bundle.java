package io.gpumem.verification;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The unpacked GPU bundle the verification runs from, and where it writes: {@code app/} holds the sample's
 * classes, {@code natives/} JCuda's driver binding, {@code lib/} the jars the sample runs on, and
 * {@code tools/} the test jars, the JUnit console launcher and this program.
 *
 * @param root the bundle's folder, where every process runs
 * @param out the output folder: the reports that come back from the machine
 * @param work a folder for everything else
 */
record Bundle(Path root, Path out, Path work) {

	/** The class path of the sample service. */
	String sampleClassPath() {
		return String.join(File.pathSeparator, "app", "natives", "lib/*");
	}

	/** The class path of the tests, benchmarks and checks. */
	String toolsClassPath() {
		return String.join(File.pathSeparator, sampleClassPath(), "tools/*");
	}

	/** The jars of tests, relative to the root. */
	List<String> testJars() throws IOException {
		try (Stream<Path> tools = Files.list(this.root.resolve("tools"))) {
			return tools.map((jar) -> this.root.relativize(jar).toString())
				.filter((jar) -> jar.endsWith("-tests.jar"))
				.sorted()
				.toList();
		}
	}

}
