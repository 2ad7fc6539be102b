package io.gpumem.autoconfigure;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Renders the table of every {@code gpumem.*} property in {@code docs/configuration.md} from the starter's
 * configuration metadata; its {@code main} rewrites the table on the page.
 */
public final class ConfigurationReference {

	static final String COMMAND = "scripts/generate-configuration-reference.sh (add -o to build offline)";

	static final String BEGIN = "<!-- generated from the configuration metadata by ConfigurationReference: "
			+ "do not edit -->";

	static final String END = "<!-- end of the generated configuration reference -->";

	private static final String HEADER = "| Name | Type | Default | Description |\n| --- | --- | --- | --- |\n";

	private static final String PREFIX = "gpumem.";

	private ConfigurationReference() {
	}

	public static void main(String[] args) throws IOException {
		Path page = page();
		List<Property> properties = properties();
		Files.writeString(page, withTable(Files.readString(page), table(properties)));
		System.out.println("Wrote " + properties.size() + " properties to " + page.normalize());
	}

	/** The page the table lives on. */
	static Path page() {
		return classes().getParent().getParent().resolveSibling("docs").resolve("configuration.md");
	}

	/** Every {@code gpumem.*} property of the starter's metadata, sorted by name. */
	static List<Property> properties() throws IOException {
		JsonNode metadata = JsonMapper.builder()
			.build()
			.readTree(classes().resolve("META-INF/spring-configuration-metadata.json").toFile());
		List<Property> properties = new ArrayList<>();
		for (JsonNode property : metadata.get("properties")) {
			String name = property.get("name").asString();
			if (name.startsWith(PREFIX)) {
				properties.add(new Property(name, property.get("type").asString(),
						text(property.get("description")), text(property.get("defaultValue"))));
			}
		}
		properties.sort(Comparator.comparing(Property::name));
		return properties;
	}

	/** The Markdown table of {@code properties}, a header and a row each. */
	static String table(List<Property> properties) {
		return HEADER + properties.stream().map(Property::row).collect(Collectors.joining("\n", "", "\n"));
	}

	/** The text between the page's markers. */
	static String section(String page) {
		int begin = page.indexOf(BEGIN + "\n");
		int end = page.indexOf(END, begin);
		if (begin < 0 || end < 0) {
			throw new IllegalStateException("docs/configuration.md lacks the lines '" + BEGIN + "' and '" + END
					+ "' that the table lives between");
		}
		return page.substring(begin + BEGIN.length() + 1, end);
	}

	/** {@code page} with {@code table} between its markers. */
	static String withTable(String page, String table) {
		String old = section(page);
		int at = page.indexOf(BEGIN + "\n") + BEGIN.length() + 1;
		return page.substring(0, at) + table + page.substring(at + old.length());
	}

	/**
	 * What differs between the table on the page and the one the metadata gives, a line per property added to,
	 * removed from or changed in the metadata; empty when the two are the same.
	 */
	static List<String> differences(String onPage, String fromMetadata) {
		Map<String, String> page = rows(onPage);
		Map<String, String> metadata = rows(fromMetadata);
		List<String> differences = new ArrayList<>();
		metadata.forEach((name, row) -> {
			if (!page.containsKey(name)) {
				differences.add("added:   " + name);
			}
			else if (!page.get(name).equals(row)) {
				differences.add("changed: " + name + "\n    page:     " + page.get(name) + "\n    metadata: " + row);
			}
		});
		page.keySet()
			.stream()
			.filter((name) -> !metadata.containsKey(name))
			.forEach((name) -> differences.add("removed: " + name));
		if (differences.isEmpty() && !onPage.equals(fromMetadata)) {
			differences.add("the header, the order of the rows or the lines between them");
		}
		return differences;
	}

	/**
	 * The value of property {@code name} in {@link GpumemProperties} bound from {@code source} alone; null where
	 * it is left unset or empty.
	 */
	static Object bound(String name, Map<String, String> source) {
		GpumemProperties properties = new Binder(new MapConfigurationPropertySource(source)).bindOrCreate("gpumem",
				Bindable.of(GpumemProperties.class));
		Object value = new BeanWrapperImpl(properties).getPropertyValue(beanPath(name));
		boolean empty = (value instanceof Collection<?> collection && collection.isEmpty())
				|| (value instanceof Map<?, ?> map && map.isEmpty());
		return empty ? null : value;
	}

	private static Map<String, String> rows(String table) {
		Map<String, String> rows = new LinkedHashMap<>();
		table.lines().filter((line) -> line.startsWith("| `")).forEach((row) -> {
			int start = row.indexOf('`') + 1;
			rows.put(row.substring(start, row.indexOf('`', start)), row);
		});
		return rows;
	}

	private static String beanPath(String name) {
		return Arrays.stream(name.substring(PREFIX.length()).split("\\."))
			.map(ConfigurationReference::camelCase)
			.collect(Collectors.joining("."));
	}

	private static String camelCase(String kebab) {
		String[] words = kebab.split("-");
		StringBuilder camel = new StringBuilder(words[0]);
		for (int i = 1; i < words.length; i++) {
			camel.append(Character.toUpperCase(words[i].charAt(0))).append(words[i].substring(1));
		}
		return camel.toString();
	}

	private static Path classes() {
		try {
			return Path.of(GpumemProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String text(JsonNode node) {
		if (node == null || node.isNull()) {
			return null;
		}
		if (node.isArray()) {
			List<String> values = new ArrayList<>();
			node.forEach((value) -> values.add(value.asString()));
			return String.join(",", values);
		}
		return node.asString();
	}

	/**
	 * A property as the metadata describes it: the type as Java writes it, the default as text (a list's values
	 * joined with commas) or null where it has none.
	 */
	record Property(String name, String type, String description, String defaultValue) {

		String row() {
			return "| `" + this.name + "` | " + shortType() + " | " + defaultCell() + " | "
					+ escape((this.description != null) ? this.description : "") + " |";
		}

		private String shortType() {
			Class<?> enumType = enumType();
			if (enumType != null) {
				return Arrays.stream(enumType.getEnumConstants())
					.map((constant) -> "`" + ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-')
							+ "`")
					.collect(Collectors.joining(" \\| "));
			}
			return "`" + this.type.replaceAll("(\\w+[.$])+", "").replace(",", ", ") + "`";
		}

		private Class<?> enumType() {
			try {
				Class<?> type = Class.forName(this.type, false, ConfigurationReference.class.getClassLoader());
				return type.isEnum() ? type : null;
			}
			catch (ClassNotFoundException ex) {
				return null;
			}
		}

		private String defaultCell() {
			return (this.defaultValue != null) ? "`" + this.defaultValue.replace("|", "\\|") + "`" : "";
		}

		private static String escape(String cell) {
			return cell.replace("|", "\\|").replace("<", "\\<");
		}

	}

}
