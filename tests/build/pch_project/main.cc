#include <cstdio>
#include "answer.h"
int main() { std::puts(Answer().c_str()); }
