package io.gpumem.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

import jcuda.LibUtils;

/**
 * Whether JCuda's native library for this platform is on the class path. JCuda publishes natives for
 * linux-x86_64 and windows-x86_64 only; elsewhere (linux-aarch64, macOS) its classes load but CUDA cannot be
 * used, and the probe says so instead of relaying JCuda's loader error.
 */
final class JCudaNatives {

	private static final String POM_PROPERTIES = "META-INF/maven/org.jcuda/jcuda/pom.properties";

	private JCudaNatives() {
	}

	/**
	 * Why CUDA cannot be used on this platform, or {@code null} when JCuda's jar of natives for it is on the
	 * class path of {@code classLoader}.
	 */
	static String missingFor(ClassLoader classLoader) {
		String version = version(classLoader);
		String name = "JCudaDriver-" + version;
		String library = LibUtils.createPlatformLibraryName(name);
		if (classLoader.getResource("lib/" + LibUtils.createLibraryFileName(library)) != null) {
			return null;
		}
		String platform = library.substring(name.length() + 1);
		return "JCuda " + version + " has no native library for this platform (" + platform
				+ "): org.jcuda:jcuda-natives is published for linux-x86_64 and windows-x86_64 only, so CUDA cannot "
				+ "be used here; the host backend can (gpumem.backend=auto or host)";
	}

	private static String version(ClassLoader classLoader) {
		try (InputStream in = classLoader.getResourceAsStream(POM_PROPERTIES)) {
			if (in != null) {
				Properties properties = new Properties();
				properties.load(in);
				return properties.getProperty("version", "?");
			}
		}
		catch (IOException ex) {
			// the version is only part of the message
		}
		return "?";
	}

}
