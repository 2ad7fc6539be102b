package io.gpumem.sample.docs;

import java.net.URI;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code curl} line of the docs, with the answer shown under it: the subset of curl and of the shell the
 * docs write ({@code -s}, {@code -X}, {@code -H}, {@code -d} with curl's form content type unless a header
 * names another, quotes, {@code $VAR}, a trailing comment), so that a test sends the request as curl would and
 * holds the answer to what the page shows.
 */
record CurlExample(String where, String method, String target, Map<String, String> headers, String body,
		Answer answer) {

	private static final Pattern ANSWER = Pattern.compile("#   (?:(\\d{3})(?: |$))?(.*)");

	private static final Pattern HOST = Pattern.compile("(?:https?://)?localhost:8080(/.*)");

	/**
	 * Reads the curl command on {@code line} and the answer on {@code next} ({@code null} where the
	 * page shows none).
	 * @throws IllegalArgumentException for a command the docs' subset does not cover, naming it
	 */
	static CurlExample parse(String where, String line, String next, Map<String, String> variables) {
		List<String> words = words(line, variables);
		String method = null;
		String target = null;
		String body = null;
		Map<String, String> headers = new LinkedHashMap<>();
		for (int i = 1; i < words.size(); i++) {
			String word = words.get(i);
			switch (word) {
				case "-s" -> {
				}
				case "-X" -> method = words.get(++i);
				case "-H" -> {
					String[] header = words.get(++i).split(":\\s*", 2);
					headers.put(header[0], header[1]);
				}
				case "-d" -> body = words.get(++i);
				default -> {
					Matcher host = HOST.matcher(word);
					if (!host.matches() || target != null) {
						throw new IllegalArgumentException(where + ": '" + word + "' is not in the docs' subset of"
								+ " curl (-s, -X, -H, -d and one URL on localhost:8080, no pipes): " + line);
					}
					target = host.group(1);
				}
			}
		}
		if (target == null) {
			throw new IllegalArgumentException(where + ": no URL on localhost:8080 in " + line);
		}
		if (method == null) {
			method = (body != null) ? "POST" : "GET";
		}
		Answer answer = null;
		if (next != null && next.trim().startsWith("#")) {
			Matcher shown = ANSWER.matcher(next);
			if (!shown.matches()) {
				throw new IllegalArgumentException(where + ": the line under a curl example is its answer, written"
						+ " '#   [status ]body': " + next);
			}
			answer = new Answer((shown.group(1) != null) ? Integer.parseInt(shown.group(1)) : 0, shown.group(2).trim());
		}
		if (body != null) {
			headers.putIfAbsent("Content-Type", "application/x-www-form-urlencoded");
		}
		return new CurlExample(where, method, target, Map.copyOf(headers), body, answer);
	}

	HttpRequest request(int port) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + this.target))
			.method(this.method, (this.body != null) ? HttpRequest.BodyPublishers.ofString(this.body)
					: HttpRequest.BodyPublishers.noBody());
		this.headers.forEach(request::header);
		return request.build();
	}

	/**
	 * Why the response differs from what the page shows, or {@code null} where it does not: without an answer
	 * shown, any 2xx will do.
	 */
	String mismatch(int status, String body) {
		int expected = (this.answer != null) ? this.answer.status() : 0;
		boolean statusHolds = (expected != 0) ? status == expected : status / 100 == 2;
		if (statusHolds && (this.answer == null || this.answer.matches(body.trim()))) {
			return null;
		}
		String answered = (body.length() > 400) ? body.trim().substring(0, 400) + "..." : body.trim();
		return this.where + ": " + this.method + " " + this.target + " answered " + status + " " + answered
				+ "\n    the page shows " + ((this.answer != null) ? this.answer : "no answer (any 2xx)");
	}

	/** Splits a shell line into words as bash would for the docs' subset: quotes, {@code $VAR}, {@code #}. */
	static List<String> words(String line, Map<String, String> variables) {
		List<String> words = new ArrayList<>();
		StringBuilder word = null;
		for (int i = 0; i < line.length(); i++) {
			char c = line.charAt(i);
			if (Character.isWhitespace(c)) {
				if (word != null) {
					words.add(word.toString());
					word = null;
				}
				continue;
			}
			if (c == '#' && word == null) {
				break;
			}
			if (c == '|' || c == ';' || c == '&' || c == '>' || c == '<' || c == '`') {
				throw new IllegalArgumentException("'" + c + "' is not in the docs' subset of the shell: " + line);
			}
			word = (word != null) ? word : new StringBuilder();
			if (c == '\'') {
				int end = line.indexOf('\'', i + 1);
				word.append(line, i + 1, end);
				i = end;
			}
			else if (c == '"') {
				int end = line.indexOf('"', i + 1);
				word.append(expand(line.substring(i + 1, end), variables));
				i = end;
			}
			else if (c == '$') {
				int end = i + 1;
				while (end < line.length() && String.valueOf(line.charAt(end)).matches("\\w")) {
					end++;
				}
				word.append(expand(line.substring(i, end), variables));
				i = end - 1;
			}
			else {
				word.append(c);
			}
		}
		if (word != null) {
			words.add(word.toString());
		}
		return words;
	}

	private static String expand(String text, Map<String, String> variables) {
		Matcher variable = Pattern.compile("\\$([A-Za-z_][A-Za-z0-9_]*)").matcher(text);
		StringBuilder expanded = new StringBuilder();
		while (variable.find()) {
			String value = variables.get(variable.group(1));
			if (value == null) {
				throw new IllegalArgumentException("$" + variable.group(1) + " is not set on the page before use");
			}
			variable.appendReplacement(expanded, Matcher.quoteReplacement(value));
		}
		return variable.appendTail(expanded).toString();
	}

	/**
	 * The answer a page shows: a status where it names one (else 0: any 2xx), and a body where {@code ...}
	 * stands for any text.
	 */
	record Answer(int status, String body) {

		boolean matches(String actual) {
			StringBuilder pattern = new StringBuilder();
			for (String part : this.body.split("\\.\\.\\.", -1)) {
				pattern.append((pattern.length() > 0) ? ".*" : "").append(Pattern.quote(part));
			}
			return Pattern.compile(pattern.toString(), Pattern.DOTALL).matcher(actual).matches();
		}

		@Override
		public String toString() {
			return ((this.status != 0) ? this.status + " " : "") + this.body;
		}

	}

}
