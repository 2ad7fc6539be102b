package io.gpumem.config;

import java.util.Objects;

/**
 * A setting given a value its rule refuses, naming the setting as its property names it (kebab case, a
 * map entry's key in brackets), so that a configuration layer can point at the line that set it.
 */
public final class InvalidSettingException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String setting;

	private final transient Object value;

	private final String rule;

	/**
	 * @param setting the setting, as in {@code max-cached} or {@code warm[4KB]}
	 * @param value the refused value
	 * @param rule what the value must be, as in {@code must not be negative}
	 */
	public InvalidSettingException(String setting, Object value, String rule) {
		super(setting + " " + rule + ", not " + value);
		this.setting = Objects.requireNonNull(setting, "setting");
		this.value = value;
		this.rule = Objects.requireNonNull(rule, "rule");
	}

	/** The setting, as in {@code max-cached}. */
	public String setting() {
		return this.setting;
	}

	/** The refused value. */
	public Object value() {
		return this.value;
	}

	/** What the value must be. */
	public String rule() {
		return this.rule;
	}

}
