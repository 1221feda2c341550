; 'on' takes two arguments but the effect gives it one.
(define (domain bw)
  (:predicates (clear ?x) (on ?x ?y))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x) (clear ?y))
    :effect (and (on ?x)
                 (not (clear ?y)))))
