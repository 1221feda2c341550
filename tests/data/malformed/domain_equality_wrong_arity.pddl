; (= ...) compares exactly two terms.
(define (domain bw)
  (:requirements :strips :equality)
  (:predicates (on ?x ?y) (clear ?x))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x) (clear ?y) (not (= ?x)))
    :effect (on ?x ?y)))
