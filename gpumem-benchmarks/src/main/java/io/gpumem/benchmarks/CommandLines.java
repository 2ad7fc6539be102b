package io.gpumem.benchmarks;

import java.util.concurrent.Callable;

import picocli.CommandLine;

/** The benchmark programs' command lines, read by picocli: {@code --help}, and errors that name the option. */
final class CommandLines {

	private CommandLines() {
	}

	/** A command line over {@code command}, whose enum options take their values in any case. */
	static CommandLine of(Object command) {
		return new CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true);
	}

	/**
	 * What {@code command} makes of {@code args}; null where {@code --help} or {@code --version} was asked, whose
	 * answer is printed. A command line it cannot take is shown with the usage, and the program exits with status 2.
	 */
	static <T> T parseOrExit(Callable<T> command, String[] args) throws Exception {
		CommandLine cli = of(command);
		try {
			if (CommandLine.printHelpIfRequested(cli.parseArgs(args))) {
				return null;
			}
		}
		catch (CommandLine.ParameterException ex) {
			cli.getErr().println(ex.getMessage());
			ex.getCommandLine().usage(cli.getErr());
			System.exit(2);
		}
		return command.call();
	}

}
