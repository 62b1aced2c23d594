// Splitting PTX text into statements (see ptx.hpp): removes // and /* */ comments, keeps strings
// whole, collapses whitespace, and tells block braces from vector operands and initialisers.
#include <fmt/format.h>
#include <cctype>
#include <charconv>

#include "artifact/ptx.hpp"

namespace gpuemu::artifact {
namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  for (char c : s.substr(1)) {
    if (!is_ptx_ident_char(c)) return false;
  }
  return true;
}

// True when `text` contains `word` as a whole whitespace- or paren-separated token.
bool has_token(std::string_view text, std::string_view word) {
  for (std::size_t pos = text.find(word); pos != std::string_view::npos; pos = text.find(word, pos + 1)) {
    const bool start_ok = pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == '(';
    const std::size_t end = pos + word.size();
    const bool end_ok = end == text.size() || text[end] == ' ' || text[end] == '(';
    if (start_ok && end_ok) return true;
  }
  return false;
}

class Splitter {
 public:
  Splitter(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  Expected<std::vector<PtxStatement>> run() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        end_of_line();
        ++line_;
        ++pos_;
        space();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        TRY(block_comment());
      } else if (c == '"') {
        TRY(string_literal());
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
        space();
      } else {
        TRY(punctuation(c));
      }
    }
    end_of_line();
    if (inner_braces_ > 0) return error(start_line_, "'{' in this statement is never closed");
    if (!trimmed().empty()) {
      return error(start_line_, fmt::format("statement '{}' is not terminated by ';'", excerpt()));
    }
    if (!blocks_.empty()) return error(blocks_.back(), "'{' opened here is never closed (missing '}')");
    return std::move(out_);
  }

 private:
  char peek(std::size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  std::unexpected<Error> error(int line, const std::string& message) const {
    return fail(ErrorKind::parse, fmt::format("{}:{}: {}", file_, line, message));
  }

  // .version, .target, .address_size, .file and .loc end at the end of their line, without ';'.
  void end_of_line() {
    if (inner_braces_ > 0) return;
    const std::string_view t = trimmed();
    for (std::string_view d : {".version", ".target", ".address_size", ".file", ".loc"}) {
      if (t.starts_with(d) && (t.size() == d.size() || t[d.size()] == ' ')) {
        flush_statement();
        return;
      }
    }
  }

  void space() {
    if (!current_.empty() && current_.back() != ' ') current_ += ' ';
  }

  void append(char c) {
    if (trimmed().empty()) start_line_ = line_;
    current_ += c;
  }

  // A view, not a copy: it is asked for at every character, so a copy made a long statement
  // quadratic (a 1 MB line took minutes).
  std::string_view trimmed() const {
    const std::string_view t = current_;
    const std::size_t b = t.find_first_not_of(' ');
    if (b == std::string_view::npos) return {};
    return t.substr(b, t.find_last_not_of(' ') - b + 1);
  }

  std::string excerpt() const {
    const std::string_view t = trimmed();
    return t.size() > 60 ? std::string(t.substr(0, 57)) + "..." : std::string(t);
  }

  void emit(PtxStatement::Kind kind, std::string text, int line) {
    out_.push_back(PtxStatement{kind, std::move(text), line});
  }

  void flush_statement() {
    const std::string_view t = trimmed();
    if (!t.empty()) emit(PtxStatement::Kind::statement, std::string(t), start_line_);
    current_.clear();
  }

  Expected<void> block_comment() {
    const int opened = line_;
    pos_ += 2;
    while (pos_ + 1 < text_.size() && !(text_[pos_] == '*' && text_[pos_ + 1] == '/')) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    if (pos_ + 1 >= text_.size()) return error(opened, "'/*' comment is never closed");
    pos_ += 2;
    space();
    return {};
  }

  Expected<void> string_literal() {
    const int opened = line_;
    append('"');
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n')
        current_ += text_[pos_++];
      current_ += text_[pos_++];
    }
    if (pos_ >= text_.size() || text_[pos_] != '"')
      return error(opened, "string literal is not closed on its line");
    current_ += '"';
    ++pos_;
    return {};
  }

  Expected<void> punctuation(char c) {
    ++pos_;
    if (inner_braces_ > 0) {  // inside a vector operand or an initialiser: braces nest, nothing ends
      if (c == '{') ++inner_braces_;
      if (c == '}' && --inner_braces_ == 0 && trimmed().starts_with(".section")) {
        current_ += c;
        flush_statement();
        return {};
      }
      current_ += c;
      return {};
    }
    if (c == ';') {
      if (trimmed().empty()) return {};  // an empty statement
      flush_statement();
      return {};
    }
    if (c == ':' && peek(0) != ':' && is_identifier(trimmed())) {
      emit(PtxStatement::Kind::label, std::string(trimmed()), start_line_);
      current_.clear();
      return {};
    }
    if (c == '{') {
      const std::string_view t = trimmed();
      if (t.empty() || has_token(t, ".entry") || has_token(t, ".func")) {
        flush_statement();
        blocks_.push_back(line_);
        emit(PtxStatement::Kind::open_block, "", line_);
        return {};
      }
      inner_braces_ = 1;
      current_ += c;
      return {};
    }
    if (c == '}') {
      if (blocks_.empty()) return error(line_, "'}' without a matching '{'");
      if (!trimmed().empty()) {
        return error(start_line_,
                     fmt::format("statement '{}' is not terminated by ';' before '}}'", excerpt()));
      }
      blocks_.pop_back();
      emit(PtxStatement::Kind::close_block, "", line_);
      return {};
    }
    append(c);
    return {};
  }

  std::string_view text_;
  std::string_view file_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int start_line_ = 1;
  int inner_braces_ = 0;
  std::vector<int> blocks_;  // lines of the open block braces
  std::string current_;
  std::vector<PtxStatement> out_;
};

}  // namespace

bool is_ptx_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

std::optional<std::int64_t> parse_int(std::string_view s, int base) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

Expected<std::vector<PtxStatement>> split_ptx(std::string_view text, std::string_view file) {
  return Splitter(text, file).run();
}

}  // namespace gpuemu::artifact
